/**
 * The route host command line's settings: the usage text, what an entry file supplies, and reading
 * the `routes:` section (config.ts) through every layer (flags, environment, config files,
 * profiles), with the policy file and the assets directories. A bad setting is one line on stderr
 * and exit code 2 (`fail`).
 */
import { ConfigError, loadSection, sectionFlags, sectionHelp } from "#lib/config";
import type { FlagSpecs, ParsedArgs } from "#lib/config/flags";
import type { FileTree } from "#lib/files";
import { type HostRuntime, parseListenAddress } from "#lib/runtime";
import type { SessionsHost } from "../sessions/embed.ts";
import { type Policy, PolicyError, readPolicy } from "./auth/policy.ts";
import { issuerFor } from "./auth/security.ts";
import type { SpawnScriptThread } from "./script/runtime.ts";
import { routesSection, scriptLimits } from "./config.ts";

export const COMMANDS = ["serve", "routes", "openapi", "types", "bundle", "audit", "resource"] as const;

export const FLAGS: FlagSpecs = {
  ...sectionFlags(routesSection),
  "config-file": {},
  profile: {},
  json: { boolean: true },
  out: {},
  since: {},
  actor: {},
  outcome: {},
  limit: {},
  type: {},
  id: {},
  tenant: {},
  owner: {},
  attributes: {},
  help: { boolean: true },
};

export const USAGE = `usage: routes <command> [options]

commands:
  serve    serve the script's routes
  routes   print the script's plan table (--json for machines)
  openapi  print the script's plan as an OpenAPI 3.1 document (JSON)
  types    write TypeScript declarations of httpmod and the host's modules for an editor
           (--out FILE, default ./httpmod.d.ts; --assets names the assets modules)
  bundle   write the script and the files beside it as one JSON file (--out FILE), which
           the Worker (apps/routes/entries/worker.ts) is built with; --policy-file goes in too
  audit    the audit events in --db, newest first: --since (RFC 3339 or 15m, 2h, 7d), --actor ID,
           --outcome allowed|denied|completed|failed, --limit N (100), --json
  resource put --type T --id I [--tenant T] [--owner O] [--attributes JSON]
           stores a resource the resolver finds (routes with .resource(...))

options (flag / environment variable / default):
${sectionHelp(routesSection, { flag: 30, env: 34 })}
  --config-file PATH               YAML file with the fields under "routes:" (repeatable)
  --profile NAME                   ROUTES_PROFILE; profile from $XDG_CONFIG_HOME/routes/profiles.yaml
  --json                           routes: print JSON
  -h, --help                       this text
also honored: LOG_LEVEL`;

/** What the entry file supplies for its runtime. */
export interface RoutesPlatform {
  /** The host file system: the script and static directories. */
  files: FileTree;
  /** Threads for handlers (Node worker_threads, Deno Web Workers). */
  spawnScriptThread: SpawnScriptThread;
  /** For `require("sessions").handler()`: the session service's files and threads. */
  sessions?: SessionsHost;
}

export type Config = Awaited<ReturnType<typeof loadConfig>>;

export async function loadConfig(runtime: HostRuntime, args: ParsedArgs, needsScript: boolean) {
  const loaded = await loadSection({
    section: routesSection,
    app: "routes",
    args: { positionals: args.positionals.slice(1), flags: args.flags },
    env: runtime.env,
    readTextFile: (path) => runtime.readTextFile(runtime.resolvePath(runtime.cwd(), path)),
  });
  const values = loaded.values;
  if (values.script === "" && needsScript) throw new ConfigError("CONFIG_MISSING_VALUE", "--script FILE is needed (or ROUTES_SCRIPT)", "default", "script");
  const scriptPath = runtime.resolvePath(runtime.cwd(), values.script);
  const limits = scriptLimits(values);
  // The issuer as a URL (a path names a provider this host mounts); no database for "" or "none".
  const issuer = issuerUrl(values.issuer, values.addr);
  const db = values.db === "none" ? "" : values.db;
  return {
    values,
    sources: loaded.sources,
    profile: loaded.profile,
    scriptPath,
    limits,
    issuer,
    db,
    assets: assetDirectories(runtime, values.assets, loaded.sources.assets),
    staticRoot: values["static-root"] ? runtime.resolvePath(runtime.cwd(), values["static-root"]) : scriptPath.replace(/\/[^/]*$/, "") || "/",
  };
}

/** The policy file's text and the policy in it (PolicyError when it is missing or wrong). */
export async function readPolicyFile(runtime: HostRuntime, config: Config): Promise<{ file: string; text: string; policy: Policy }> {
  const file = config.values["policy-file"];
  const text = await runtime.readTextFile(runtime.resolvePath(runtime.cwd(), file));
  if (text === undefined) throw new PolicyError(`policy file ${file} (from ${config.sources["policy-file"]}) does not exist`);
  return { file, text, policy: await readPolicy(text, `policy file ${file}`) };
}

/** Names a script cannot take for an assets module: the host's own modules. */
const RESERVED_MODULES = new Set(["httpmod", "httpmod:host", "idp", "sessions", "resources", "audit"]);
/** An assets module's name: letters, digits, `-` and `_`, with an optional scheme-like prefix as
 * the original spells them (`fs:assets`); a plain name is also `fs:<name>` to scripts. */
const ASSETS_MODULE_NAME = /^(?:[a-z][a-z0-9_-]*:)?[a-z][a-z0-9_-]*$/i;

/** The `assets` setting as module name -> absolute directory: `DIR` is the module `assets`. */
function assetDirectories(runtime: HostRuntime, setting: string, source: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of setting.split(",").map((x) => x.trim()).filter((x) => x !== "")) {
    const eq = item.indexOf("=");
    const name = eq > 0 ? item.slice(0, eq) : "assets";
    const dir = eq > 0 ? item.slice(eq + 1) : item;
    if (!ASSETS_MODULE_NAME.test(name) || RESERVED_MODULES.has(name)) {
      throw new ConfigError(
        "CONFIG_INVALID_VALUE",
        `assets (from ${source}): ${JSON.stringify(name)} cannot name a module (letters, digits, - and _, optionally after a prefix such as fs:, not ${
          [...RESERVED_MODULES].join(", ")
        })`,
        source,
        "assets",
      );
    }
    if (name in out) throw new ConfigError("CONFIG_INVALID_VALUE", `assets (from ${source}): the module ${name} is given twice`, source, "assets");
    out[name] = runtime.resolvePath(runtime.cwd(), dir);
  }
  return out;
}

/** This host's origin as a browser on this machine reaches it (0.0.0.0 and :: by loopback). */
export function ownOrigin(addr: string): string {
  const { hostname, port } = parseListenAddress(addr);
  const host = hostname === "0.0.0.0" || hostname === "::" || hostname === "" ? "127.0.0.1" : hostname.includes(":") ? `[${hostname}]` : hostname;
  return `http://${host}:${port}`;
}

/** The issuer setting as a URL, this host's origin taken from its listen address. */
export const issuerUrl = (issuer: string, addr: string): string => issuerFor(issuer, ownOrigin(addr));

export function fail(runtime: HostRuntime, message: string): never {
  runtime.printError(`routes: ${message}`);
  return runtime.exit(2);
}
