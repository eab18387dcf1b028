/**
 * The session service's settings: the `sessions:` section, read as the identity provider and the
 * route host read theirs (lib/config): defaults < profile (`$XDG_CONFIG_HOME/sessions/profiles.yaml`,
 * `--profile` / `SESSIONS_PROFILE`) < config files (`--config-file`) < `SESSIONS_*` environment
 * variables < flags. A bad value is CONFIG_INVALID_VALUE naming its flag, variable or file.
 * Runtime-free: the environment and files come in through the HostRuntime.
 */
import {
  acceptedBy,
  defineSection,
  listenAddressCheck,
  listField,
  type LoadedSection,
  loadSection,
  sectionFlags,
  sectionHelp,
  stringField,
  wholeNumberCheck,
} from "#lib/config";
import type { FlagSpecs, ParsedArgs } from "#lib/config/flags";
import { hostAllowlist, parseAllowedHosts } from "#lib/http";
import type { HostRuntime } from "#lib/runtime";
import { parseModuleCatalog } from "./domain/modules.ts";
import { MODULE_CATALOG } from "./live/types.ts";

const sessionsSection = defineSection({
  key: "sessions",
  envPrefix: "SESSIONS_",
  fields: {
    addr: stringField({ default: "127.0.0.1:3210", description: "Listen address HOST:PORT", check: listenAddressCheck }),
    db: stringField({
      default: "file:./data/sessions.db",
      description: "file:PATH (embedded libSQL), :memory:, or a libSQL server (libsql://, https://, wss://); SESSIONS_DB_AUTH_TOKEN is sent to a server",
    }),
    "library-dir": stringField({ default: "./libraries", description: "Where library names are looked up (not / or the home directory as a whole)" }),
    "worktree-roots": listField({
      default: [],
      description:
        "Directories a session's worktree_path must be inside, after symlinks (comma-separated, repeatable; never / or the home directory as a whole); empty: the start directory and the temp directory",
    }),
    "auth-token": stringField({
      default: "",
      secret: true,
      description:
        "Every request but GET /api/v1/health then needs it (Authorization: Bearer, or the cookie the printed link sets); required to listen beyond loopback (16+ characters)",
    }),
    modules: stringField({
      default: MODULE_CATALOG.join(","),
      description: 'The module catalog templates may use: a comma-separated subset ("" or none: none)',
      // SESSIONS_MODULES="" has always meant no modules: it must not widen to the whole catalog.
      emptyEnvIsValue: true,
      check: acceptedBy(parseModuleCatalog, `expected names from the catalog ${MODULE_CATALOG.join(", ")}, comma-separated, or none`),
    }),
    threads: stringField({
      default: "2",
      description:
        "Sandbox threads; each session is pinned to one, so a long execution never blocks the server; 0 runs sandboxes on the server's own thread (debugging only)",
      check: wholeNumberCheck(0, 64),
    }),
    "allowed-hosts": stringField({
      default: "",
      description:
        "Host names answered beyond loopback and localhost (comma-separated; .domain for its subdomains; * for any): any other Host header gets 421 (DNS rebinding)",
      check: acceptedBy((value) => hostAllowlist({ hosts: parseAllowedHosts(value) }), "expected host names, .domain or *"),
    }),
  },
});

type SessionsFields = typeof sessionsSection.fields;
export type SessionsConfig = LoadedSection<SessionsFields>;

/** What `sessions serve` accepts: the section's flags, the files and profile, and help. */
export const SESSIONS_FLAGS: FlagSpecs = {
  ...sectionFlags(sessionsSection),
  "config-file": {},
  profile: {},
  help: { boolean: true },
};

/** The defaults as `--help` shows them. */
const SHOWN_DEFAULT: Partial<Record<keyof SessionsFields, string>> = { "worktree-roots": "the start directory and the temp directory", "auth-token": "none" };

export const USAGE = `usage: sessions serve [options]

options (flag / environment variable / default):
${sectionHelp(sessionsSection, { flag: 22, env: 26 }, (f: string) => SHOWN_DEFAULT[f as keyof SessionsFields])}
  --config-file PATH     YAML file with the fields under "sessions:" (repeatable)
  --profile NAME         SESSIONS_PROFILE; profile from $XDG_CONFIG_HOME/sessions/profiles.yaml
  -h, --help             this text
also honored: SESSIONS_DB_AUTH_TOKEN, LOG_LEVEL (debug, info, warn, error, silent)`;

/** The section from every source; `args` are the words after `serve`. */
export function loadSessionsConfig(runtime: HostRuntime, args: ParsedArgs): Promise<SessionsConfig> {
  return loadSection({
    section: sessionsSection,
    app: "sessions",
    args,
    env: runtime.env,
    readTextFile: (path) => runtime.readTextFile(runtime.resolvePath(runtime.cwd(), path)),
  });
}
