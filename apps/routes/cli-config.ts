/**
 * The route host command line's settings: the `routes:` section (flags, environment, config
 * files), the usage text, what an entry file supplies, and reading them (with the policy file and
 * the assets directories). A bad setting is one line on stderr and exit code 2 (`fail`).
 */
import { booleanField, ConfigError, defineSection, envName, fieldNames, flagName, listenAddressCheck, loadSection, stringField } from "#lib/config";
import type { FlagSpecs, ParsedArgs } from "#lib/config/flags";
import type { FileTree } from "#lib/files";
import { hostAllowlist, parseAllowedHosts, parseTrustedProxy } from "#lib/http";
import { type HostRuntime, parseListenAddress } from "#lib/runtime";
import * as v from "valibot";
import type { SessionsHost } from "../sessions/embed.ts";
import { type Policy, PolicyError, readPolicy } from "./auth/policy.ts";
import { DEFAULT_SIGN_IN_RATE_LIMIT, issuerFor, parseSignInRateLimit } from "./auth/security.ts";
import type { SpawnScriptThread } from "./script/runtime.ts";
import type { ScriptLimits } from "./script/script-sandbox.ts";

const wholeNumber = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.check((s: string) => /^\d+$/.test(s) && Number(s) >= min && Number(s) <= max, `expected a whole number from ${min} to ${max}`),
  );

const validSetting = (parse: () => unknown) => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

export const routesSection = defineSection({
  key: "routes",
  envPrefix: "ROUTES_",
  fields: {
    script: stringField({ default: "", description: "The route script (JavaScript); files beside it may be required" }),
    addr: stringField({
      default: "127.0.0.1:8080",
      description: "Listen address HOST:PORT",
      check: listenAddressCheck,
    }),
    dev: booleanField({ default: false, description: "Development mode: reload the script when it changes, error messages in 500s, a dev page at /_routes" }),
    threads: stringField({
      default: "2",
      description: "Sandbox threads running handlers (0: on the serving thread, for debugging)",
      check: wholeNumber(0, 64),
    }),
    issuer: stringField({
      default: "http://127.0.0.1:5556",
      description:
        "OIDC issuer whose access tokens authenticate requests and where browsers sign in; a path (/idp) is this host's own origin plus that path, for an identity provider the script mounts there (empty: no authenticator)",
    }),
    audience: stringField({ default: "", description: "Accepted aud of access tokens, comma-separated (empty: the sign-in client id; *: any)" }),
    "client-id": stringField({
      default: "public-spa",
      description: "Client id for browser sign-in at the issuer (/auth/login; redirect URI <origin>/auth/callback)",
    }),
    "client-secret": stringField({ default: "", secret: true, description: "Its secret, for a confidential client" }),
    "policy-file": stringField({
      default: "",
      description:
        "Policy (YAML or JSON) mapping roles to actions; ROUTES_POLICY gives one inline (neither: actions granted by the token's scope, roles, groups or permissions)",
    }),
    "introspection-client-id": stringField({
      default: "",
      description: "Client id for introspecting opaque tokens at the issuer (empty: opaque tokens refused)",
    }),
    "introspection-client-secret": stringField({ default: "", secret: true, description: "Its secret" }),
    assets: stringField({
      default: "",
      description:
        "Read-only directories a script serves with app.staticFromAssetsModule(prefix, require(NAME), root): DIR (module assets) or NAME=DIR, comma-separated; bundled into the Worker by `bundle`",
    }),
    "static-root": stringField({ default: "", description: "Directory app.static paths are relative to (default: the script's directory)" }),
    "session-secret": stringField({ default: "", secret: true, description: "Key signing the host session cookie (default: random at each start)" }),
    db: stringField({
      default: "",
      description:
        "SQL store for resources and audit events: file:PATH, :memory:, or a libSQL server (ROUTES_DB_AUTH_TOKEN); empty or none: no store (routes with resources answer 500)",
    }),
    audit: stringField({
      default: "auto",
      description: "Where audit events go: db, log (one line each), off; auto: db with --db, else log",
      check: v.picklist(["auto", "db", "log", "off"], 'expected "auto", "db", "log" or "off"'),
    }),
    "cpu-ms": stringField({ default: "5000", description: "CPU time of one handler call, ms", check: wholeNumber(1, 600_000) }),
    "wall-ms": stringField({ default: "30000", description: "Wall time of one handler call, ms", check: wholeNumber(1, 600_000) }),
    "mem-mb": stringField({ default: "64", description: "QuickJS heap of one sandbox, MiB", check: wholeNumber(1, 2048) }),
    "allowed-hosts": stringField({
      default: "",
      description:
        "Host names answered beyond loopback, localhost, the listen address and the issuer's host, comma-separated (.domain: its subdomains; *: any): any other Host gets 421 (DNS rebinding)",
      check: v.pipe(
        v.string(),
        v.check((value: string) => validSetting(() => hostAllowlist({ hosts: parseAllowedHosts(value) })), "expected host names, .domain or *"),
      ),
    }),
    "trusted-proxy": stringField({
      default: "none",
      description:
        "Whose word counts for the client's address and https: none (the socket's peer), cloudflare (CF-Connecting-IP), or the proxies' IP addresses (X-Forwarded-For, X-Forwarded-Proto)",
      check: v.pipe(v.string(), v.check((value: string) => validSetting(() => parseTrustedProxy(value)), "expected none, cloudflare or IP addresses")),
    }),
    "sign-in-rate-limit": stringField({
      default: DEFAULT_SIGN_IN_RATE_LIMIT,
      description:
        "Requests to the sign-in routes (/auth/*) one client address may make: LIMIT/SECONDS, one counter for all of them (past it: 429); off: no limit",
      check: v.pipe(v.string(), v.check((value: string) => validSetting(() => parseSignInRateLimit(value)), "expected LIMIT/SECONDS (such as 60/60) or off")),
    }),
  },
});

export const COMMANDS = ["serve", "routes", "openapi", "types", "bundle", "audit", "resource"] as const;

export const FLAGS: FlagSpecs = {
  ...Object.fromEntries(
    fieldNames(routesSection).map((
      f,
    ) => [flagName(routesSection, f)!, routesSection.fields[f as keyof typeof routesSection.fields].type === "boolean" ? { boolean: true } : {}]),
  ),
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
           the Worker (apps/routes/worker.ts) is built with; --policy-file goes in too
  audit    the audit events in --db, newest first: --since (RFC 3339 or 15m, 2h, 7d), --actor ID,
           --outcome allowed|denied|completed|failed, --limit N (100), --json
  resource put --type T --id I [--tenant T] [--owner O] [--attributes JSON]
           stores a resource the resolver finds (routes with .resource(...))

options (flag / environment variable / default):
${
  fieldNames(routesSection)
    .map((f) => {
      const def = routesSection.fields[f as keyof typeof routesSection.fields];
      return `  --${f.padEnd(28)} ${(envName(routesSection, f) ?? "").padEnd(34)} ${String(def.default) || '""'}\n      ${def.description}`;
    })
    .join("\n")
}
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
  const limits: ScriptLimits = { cpuMs: Number(values["cpu-ms"]), wallMs: Number(values["wall-ms"]), memMb: Number(values["mem-mb"]) };
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
