/**
 * The route host's command line, on any HostRuntime (Node or Deno):
 *
 *   routes serve --script FILE [--addr HOST:PORT] [--dev] [options]   serve a script's routes
 *   routes routes --script FILE [--json]                              print the plan table
 *   routes bundle --script FILE --out FILE.json                       what a Worker is built with
 *   routes audit --db URL [--since 2h] [--actor ID] [--outcome denied] [--limit N] [--json]
 *   routes resource put --db URL --type T --id I [--tenant T] [--owner O] [--attributes JSON]
 *
 * Settings come from defaults < profile < config files (`routes:` section) < environment
 * (`ROUTES_*`) < flags, as for the identity provider. Bad configuration or a script that does not
 * load prints one line `routes: <message>` on stderr and exits with code 2.
 */
import { ConfigError } from "#lib/config";
import { type FlagSpecs, lastFlag, parseCommandLine, type ParsedArgs } from "#lib/config/flags";
import { loadSection } from "#lib/config";
import { booleanField, defineSection, envName, fieldNames, flagName, listenAddressCheck, stringField } from "#lib/config";
import type { FileTree } from "#lib/files";
import { withRequestId } from "#lib/http";
import { alignColumns, configSourcesLine, printBanner, serviceLogger } from "#lib/cli-output";
import type { Logger } from "#lib/log";
import { loadQuickJS, type SandboxEngine } from "#lib/sandbox";
import { type HostRuntime, parseListenAddress, type RunningServer, type ServeEnv } from "#lib/runtime";
import * as v from "valibot";
import { idpMountable } from "./core/mountables.ts";
import { type EmbeddedSessions, embeddedSessionService, type SessionsHost } from "../sessions/embed.ts";
import { type Policy, PolicyError, readPolicy } from "./auth/policy.ts";
import { issuerFor } from "./auth/security.ts";
import { type AuditSetting, buildRouteHost } from "./build.ts";
import { DEV_PAGE_PATH, devPage } from "./core/dev-page.ts";
import type { RouteHost, RouteInfo } from "./core/types.ts";
import { readScriptBundle, readWorkerBundle, sameBundle } from "./script/read-bundle.ts";
import type { AuditEvent, AuditOutcome } from "./core/services.ts";
import { prepareRoutesStore, putResource, queryAudit } from "./store/store.ts";
import { openSqlStore } from "#lib/db/open";
import type { SqlStore } from "#lib/db";
import { inProcessScriptRuntime, type SpawnScriptThread, threadScriptRuntime } from "./script/runtime.ts";
import type { ScriptBundle, ScriptLimits } from "./script/script-sandbox.ts";

const wholeNumber = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.check((s: string) => /^\d+$/.test(s) && Number(s) >= min && Number(s) <= max, `expected a whole number from ${min} to ${max}`),
  );

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
  },
});

const COMMANDS = ["serve", "routes", "bundle", "audit", "resource"] as const;

const FLAGS: FlagSpecs = {
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

type Config = Awaited<ReturnType<typeof loadConfig>>;

async function loadConfig(runtime: HostRuntime, args: ParsedArgs, needsScript: boolean) {
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
async function readPolicyFile(runtime: HostRuntime, config: Config): Promise<{ file: string; text: string; policy: Policy }> {
  const file = config.values["policy-file"];
  const text = await runtime.readTextFile(runtime.resolvePath(runtime.cwd(), file));
  if (text === undefined) throw new PolicyError(`policy file ${file} (from ${config.sources["policy-file"]}) does not exist`);
  return { file, text, policy: await readPolicy(text, `policy file ${file}`) };
}

/** Names a script cannot take for an assets module: the host's own modules. */
const RESERVED_MODULES = new Set(["httpmod", "idp", "sessions", "resources", "audit"]);

/** The `assets` setting as module name -> absolute directory: `DIR` is the module `assets`. */
function assetDirectories(runtime: HostRuntime, setting: string, source: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of setting.split(",").map((x) => x.trim()).filter((x) => x !== "")) {
    const eq = item.indexOf("=");
    const name = eq > 0 ? item.slice(0, eq) : "assets";
    const dir = eq > 0 ? item.slice(eq + 1) : item;
    if (!/^[a-z][a-z0-9_-]*$/i.test(name) || RESERVED_MODULES.has(name)) {
      throw new ConfigError(
        "CONFIG_INVALID_VALUE",
        `assets (from ${source}): ${JSON.stringify(name)} cannot name a module (letters, digits, - and _, not ${[...RESERVED_MODULES].join(", ")})`,
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
function ownOrigin(addr: string): string {
  const { hostname, port } = parseListenAddress(addr);
  const host = hostname === "0.0.0.0" || hostname === "::" || hostname === "" ? "127.0.0.1" : hostname.includes(":") ? `[${hostname}]` : hostname;
  return `http://${host}:${port}`;
}

/** The issuer setting as a URL, this host's origin taken from its listen address. */
export const issuerUrl = (issuer: string, addr: string): string => issuerFor(issuer, ownOrigin(addr));

/** The host this command line serves, from its settings (the one builder: build.ts). */
function buildHost(
  platform: RoutesPlatform,
  config: Config,
  logger: Logger,
  threads: number,
  engine: SandboxEngine | undefined,
  policy: Policy | undefined,
  store: SqlStore | undefined,
  platformEnv: Record<string, string | undefined>,
  sessionsMount: EmbeddedSessions | undefined,
): Promise<RouteHost> {
  const { values } = config;
  // A provider mounted here (issuer a path) accepts this host's sign-in callback and, through the
  // callback's origin, its logout redirect, unless IDP_REDIRECT_URIS says otherwise.
  const idpEnv = values.issuer.startsWith("/") && !platformEnv.IDP_REDIRECT_URIS
    ? { ...platformEnv, IDP_REDIRECT_URIS: `${ownOrigin(values.addr)}/auth/callback` }
    : platformEnv;
  return buildRouteHost({
    logger,
    dev: values.dev,
    files: { tree: platform.files, root: config.staticRoot },
    assets: Object.fromEntries(Object.entries(config.assets).map(([name, root]) => [name, { tree: platform.files, root }])),
    store,
    audit: values.audit as AuditSetting,
    security: {
      issuer: config.issuer,
      audience: values.audience,
      introspection: values["introspection-client-id"]
        ? { clientId: values["introspection-client-id"], clientSecret: values["introspection-client-secret"] }
        : undefined,
      clientId: values["client-id"],
      clientSecret: values["client-secret"],
      sessionSecret: values["session-secret"],
      policy,
    },
    mountables: { idp: idpMountable({ logger: logger.child({ service: "idp" }), env: idpEnv }), sessions: sessionsMount?.handler },
    runtime: (natives, hostCalls) =>
      engine
        ? inProcessScriptRuntime(engine, { natives, hostCalls, limits: config.limits })
        : threadScriptRuntime(platform.spawnScriptThread, { natives, hostCalls, limits: config.limits, threads }),
  });
}

/** The plan table as text: one line a route, so a reviewer sees at a glance what is public. */
export function formatPlanTable(rows: RouteInfo[]): string {
  const header = ["METHOD", "PATTERN", "ACCESS", "RESOURCES", "CSRF", "ACTION", "AUDIT", "AT"];
  const lines = rows.map((r) => [
    r.kind === "route" ? r.method! : r.kind.toUpperCase(),
    r.pattern,
    r.access,
    r.resources?.length ? r.resources.join(",") : "-",
    r.csrf ? "yes" : "-",
    r.action ?? "-",
    r.audit ?? "-",
    r.at ?? (r.source === "host" ? "(host)" : ""),
  ]);
  return alignColumns([header, ...lines]);
}

export async function runRoutesCli(runtime: HostRuntime, platform: RoutesPlatform, argv: string[] = runtime.args): Promise<RunningServer | undefined> {
  let args: ParsedArgs;
  let config: Config;
  try {
    args = parseCommandLine(argv, FLAGS);
    if (lastFlag(args, "help") === "true" || args.positionals[0] === "help") {
      runtime.print(USAGE);
      return undefined;
    }
    const command = args.positionals[0];
    if (!COMMANDS.includes(command as never)) {
      return fail(runtime, command === undefined ? `a command is needed: ${COMMANDS.join(", ")}` : `unknown command ${command}`);
    }
    const words = command === "resource" ? 2 : 1;
    if (command === "resource" && args.positionals[1] !== "put") return fail(runtime, "resource takes one command: put");
    if (args.positionals.length > words) return fail(runtime, `unexpected argument ${args.positionals[words]}`);
    config = await loadConfig(runtime, { positionals: args.positionals.slice(words - 1), flags: args.flags }, command !== "audit" && command !== "resource");
  } catch (err) {
    if (err instanceof ConfigError) return fail(runtime, err.message);
    throw err;
  }
  if (args.positionals[0] === "bundle") return writeBundle(runtime, platform, config, lastFlag(args, "out"));
  if (args.positionals[0] === "audit" || args.positionals[0] === "resource") return storeCommand(runtime, config, args);
  const logger = serviceLogger(runtime, "routes");
  const json = lastFlag(args, "json") === "true";
  const listing = args.positionals[0] === "routes";
  const threads = listing ? 0 : Number(config.values.threads);
  let policy: Policy | undefined;
  const policyFile = config.values["policy-file"];
  const inlinePolicy = runtime.env.ROUTES_POLICY?.trim();
  if (policyFile && inlinePolicy) return fail(runtime, `both ROUTES_POLICY and policy-file (from ${config.sources["policy-file"]}) are set; use one`);
  try {
    if (policyFile) policy = (await readPolicyFile(runtime, config)).policy;
    else if (inlinePolicy) policy = await readPolicy(inlinePolicy, "ROUTES_POLICY");
  } catch (err) {
    return fail(runtime, (err as Error).message);
  }
  let store: SqlStore | undefined;
  if (config.db && !listing) {
    try {
      store = await openSqlStore(runtime, config.db, runtime.env.ROUTES_DB_AUTH_TOKEN);
      await prepareRoutesStore(store);
    } catch (err) {
      return fail(runtime, `--db ${config.db}: ${(err as Error).message}`);
    }
  }
  const engine = threads === 0 ? await loadQuickJS() : undefined;
  const sessionsMount = platform.sessions ? embeddedSessionService(runtime, platform.sessions, logger.child({ service: "sessions" })) : undefined;
  const host = await buildHost(platform, config, logger, threads, engine, policy, store, runtime.env, sessionsMount);

  let bundle: ScriptBundle;
  try {
    bundle = await readScriptBundle(platform.files, config.scriptPath);
    await host.loadScript(bundle);
  } catch (err) {
    await host.close();
    return fail(runtime, (err as Error).message);
  }
  if (listing) {
    runtime.print(json ? JSON.stringify(host.routes(), null, 2) : formatPlanTable(host.routes()));
    await host.close();
    return undefined;
  }

  // Dev mode: each request first checks whether the script changed (one check at a time).
  let checking: Promise<void> | undefined;
  const reloadIfChanged = async () => {
    let next: ScriptBundle;
    try {
      next = await readScriptBundle(platform.files, config.scriptPath);
    } catch (err) {
      logger.error("script not readable, keeping the previous routes", { error: (err as Error).message });
      return;
    }
    if (sameBundle(next, bundle)) return;
    bundle = next;
    try {
      await host.loadScript(next);
      logger.info("script reloaded", { script: config.scriptPath, routes: host.routes().length });
    } catch (err) {
      logger.error("script failed to load, keeping the previous routes", { error: (err as Error).message });
    }
  };
  const app = withRequestId(
    {
      fetch: async (request: Request, env: ServeEnv) => {
        if (config.values.dev) {
          checking ??= reloadIfChanged().finally(() => (checking = undefined));
          await checking;
          const page = devPage(request, host, config.scriptPath);
          if (page) return page;
        }
        return host.fetch(request, env);
      },
    },
    { accessLog: logger },
  );
  let server: RunningServer;
  try {
    server = await runtime.serve((req, env) => app.fetch(req, env), parseListenAddress(config.values.addr));
  } catch (err) {
    await host.close();
    return fail(runtime, `cannot listen on ${config.values.addr}: ${(err as Error).message}`);
  }
  const { issuer } = config;
  logger.info("routes listening", {
    addr: `${server.hostname}:${server.port}`,
    script: config.scriptPath,
    routes: host.routes().length,
    dev: config.values.dev,
    threads,
    issuer: issuer || null,
  });
  const rows = host.routes();
  const count = (access: string) => rows.filter((r) => r.access === access).length;
  printBanner(runtime, `route host  http://${server.hostname}:${server.port}`, [
    ["script", config.scriptPath],
    [
      "routes",
      `${count("public")} public, ${count("auth") + count("auth?")} authenticated, ${count("mount")} mounts, ${
        count("static")
      } static (npm run routes -- routes --script ... lists them)`,
    ],
    ["dev page", config.values.dev ? `http://${server.hostname}:${server.port}${DEV_PAGE_PATH} (reloads on edit)` : undefined],
    ["data", store ? `${config.db} (resources; audit ${config.values.audit === "auto" ? "db" : config.values.audit})` : undefined],
    [
      "authorized by",
      policyFile ? `policy file ${policyFile}` : inlinePolicy ? "the policy in ROUTES_POLICY" : "the token's scope, roles, groups or permissions",
    ],
    ["sign-in", config.values.issuer ? `http://${server.hostname}:${server.port}/auth/login (client ${config.values["client-id"]} at ${issuer})` : undefined],
    // A path issuer is a provider this script mounts: its own, not the one a `npm start` runs on :5556.
    ["provider", config.values.issuer.startsWith("/") ? `${issuer}: this script's own (not :5556's); who is signed in: ${issuer}/debug/ui` : undefined],
    [
      "tokens from",
      config.values.issuer ? `${issuer} (aud ${config.values.audience || config.values["client-id"]})` : "nobody: authenticated routes answer 500",
    ],
    ["config", configSourcesLine(config.profile, config.sources)],
  ]);
  runtime.onShutdown(async () => {
    logger.info("routes shutting down");
    await server.close();
    await host.close();
    await sessionsMount?.close();
    await store?.close();
    logger.info("routes stopped");
  });
  return server;
}

async function writeBundle(runtime: HostRuntime, platform: RoutesPlatform, config: Config, out: string | undefined): Promise<undefined> {
  if (!out) return fail(runtime, "bundle needs --out FILE.json");
  const path = runtime.resolvePath(runtime.cwd(), out);
  const cut = path.lastIndexOf("/");
  try {
    const bundle = await readWorkerBundle(platform.files, config.scriptPath, config.assets);
    // Read and checked here: a bad policy fails the build, not the Worker's first request.
    const policyFile = config.values["policy-file"] ? await readPolicyFile(runtime, config) : undefined;
    if (policyFile) bundle.policy = policyFile.text;
    await runtime.ensureDir(path.slice(0, cut) || "/");
    await platform.files.writeText(path.slice(0, cut) || "/", path.slice(cut + 1), JSON.stringify(bundle));
    runtime.print(
      `routes: wrote ${out} (${Object.keys(bundle.script.files).length} script files, ${Object.keys(bundle.files).length} files${
        policyFile ? `, the policy of ${policyFile.file}` : ""
      })`,
    );
  } catch (err) {
    return fail(runtime, (err as Error).message);
  }
  return undefined;
}

/** `--since`: RFC 3339, or a duration back from now (`90s`, `15m`, `2h`, `7d`). */
export function sinceTime(value: string, now = Date.now()): string {
  const m = /^(\d+)([smhd])$/.exec(value);
  if (m) return new Date(now - Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as "s" | "m" | "h" | "d"]).toISOString();
  const at = new Date(value);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d\d-\d\d/.test(value)) {
    throw new Error(`--since ${value}: expected RFC 3339 (2026-11-25T06:00:00Z) or a duration (15m, 2h, 7d)`);
  }
  return at.toISOString();
}

const OUTCOMES = ["allowed", "denied", "completed", "failed"] as const;

/** `routes audit` and `routes resource put`: the SQL store without a server. */
async function storeCommand(runtime: HostRuntime, config: Config, args: ParsedArgs): Promise<undefined> {
  if (!config.db) return fail(runtime, `${args.positionals[0]} needs --db URL (or ROUTES_DB)`);
  const flag = (name: string) => lastFlag(args, name);
  let store: SqlStore;
  try {
    store = await openSqlStore(runtime, config.db, runtime.env.ROUTES_DB_AUTH_TOKEN);
    await prepareRoutesStore(store);
  } catch (err) {
    return fail(runtime, `--db ${config.db}: ${(err as Error).message}`);
  }
  try {
    if (args.positionals[0] === "resource") {
      const type = flag("type");
      const id = flag("id");
      if (!type || !id) return fail(runtime, "resource put needs --type and --id");
      let attributes: Record<string, unknown> = {};
      const raw = flag("attributes");
      if (raw !== undefined) {
        try {
          attributes = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          return fail(runtime, "--attributes must be a JSON object");
        }
        if (attributes === null || typeof attributes !== "object" || Array.isArray(attributes)) return fail(runtime, "--attributes must be a JSON object");
      }
      await putResource(store, { type, id, tenantId: flag("tenant"), owner: flag("owner"), attributes });
      runtime.print(`routes: ${type} ${id} stored`);
      return undefined;
    }
    const outcome = flag("outcome");
    if (outcome !== undefined && !OUTCOMES.includes(outcome as never)) return fail(runtime, `--outcome must be one of ${OUTCOMES.join(", ")}`);
    const limit = flag("limit") === undefined ? 100 : Number(flag("limit"));
    if (!Number.isInteger(limit) || limit < 1) return fail(runtime, "--limit must be a positive whole number");
    let since: string | undefined;
    try {
      since = flag("since") === undefined ? undefined : sinceTime(flag("since")!);
    } catch (err) {
      return fail(runtime, (err as Error).message);
    }
    const events = await queryAudit(store, { since, actor: flag("actor"), outcome: outcome as AuditOutcome | undefined, limit });
    if (lastFlag(args, "json") === "true") runtime.print(JSON.stringify(events, null, 2));
    else runtime.print(formatAuditTable(events));
    return undefined;
  } finally {
    await store.close();
  }
}

export function formatAuditTable(events: AuditEvent[]): string {
  const header = ["AT", "EVENT", "OUTCOME", "ACTOR", "ACTION", "STATUS", "REASON", "ROUTE", "REQUEST"];
  const rows = events.map((
    e,
  ) => [
    e.at,
    e.event,
    e.outcome,
    e.actor?.id ?? "-",
    e.action ?? "-",
    e.statusCode === undefined ? "-" : String(e.statusCode),
    e.reason ?? "-",
    e.routeName ?? `${e.method} ${e.pattern}`,
    e.requestId,
  ]);
  return alignColumns([header, ...rows]);
}

function fail(runtime: HostRuntime, message: string): never {
  runtime.printError(`routes: ${message}`);
  return runtime.exit(2);
}
