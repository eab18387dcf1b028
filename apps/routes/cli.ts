/**
 * The route host's command line, on any HostRuntime (Node or Deno):
 *
 *   routes serve --script FILE [--addr HOST:PORT] [--dev] [options]   serve a script's routes
 *   routes routes --script FILE [--json]                              print the plan table
 *   routes openapi --script FILE                                      the plan as OpenAPI 3.1
 *   routes types [--out httpmod.d.ts] [--assets ...]                  declarations for editors
 *   routes bundle --script FILE --out FILE.json                       what a Worker is built with
 *   routes audit --db URL [--since 2h] [--actor ID] [--outcome denied] [--limit N] [--json]
 *   routes resource put --db URL --type T --id I [--tenant T] [--owner O] [--attributes JSON]
 *
 * Settings come from defaults < profile < config files (`routes:` section) < environment
 * (`ROUTES_*`) < flags, as for the identity provider. Bad configuration or a script that does not
 * load prints one line `routes: <message>` on stderr and exits with code 2.
 */
import { ConfigError } from "#lib/config";
import { lastFlag, parseCommandLine, type ParsedArgs } from "#lib/config/flags";
import {
  describeAllowlist,
  envelopeMisdirected,
  hostAllowlist,
  listenUrl,
  parseAllowedHosts,
  throughProxy,
  warnIfHostCheckOff,
  withAllowedHosts,
  withRequestId,
} from "#lib/http";
import { alignColumns, configSourcesLine, listenFailure, printBanner, serviceCommand, serviceLogger } from "#lib/cli-output";
import type { Logger } from "#lib/log";
import { loadQuickJS, type SandboxEngine } from "#lib/sandbox";
import { type HostRuntime, parseListenAddress, type RunningServer, type ServeEnv } from "#lib/runtime";
import { idpMountable, loopbackCallersOnly } from "./host/mountables.ts";
import { type EmbeddedSessions, embeddedSessionService } from "../sessions/embed.ts";
import { type Policy, readPolicy } from "./auth/policy.ts";
import { buildRouteHost } from "./build.ts";
import { auditSetting, securitySettings, trustedProxy } from "./config.ts";
import { DEV_PAGE_PATH, devPage } from "./host/dev-page.ts";
import { planOpenApi } from "./host/openapi.ts";
import { httpmodDeclarations } from "./script/httpmod-types.ts";
import type { RouteHost, RouteInfo } from "./core/types.ts";
import { readScriptBundle, readWorkerBundle, sameBundle } from "./script/read-bundle.ts";
import { prepareRoutesStore } from "./store/store.ts";
import { openSqlStore } from "#lib/db/open";
import type { SqlStore } from "#lib/db";
import { inProcessScriptRuntime, threadScriptRuntime } from "./script/runtime.ts";
import type { ScriptBundle } from "./script/script-sandbox.ts";

import { COMMANDS, type Config, fail, FLAGS, loadConfig, ownOrigin, readPolicyFile, type RoutesPlatform, USAGE } from "./cli-config.ts";
import { storeCommand } from "./cli-store.ts";

export { issuerUrl, type RoutesPlatform } from "./cli-config.ts";

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
    audit: auditSetting(values),
    security: securitySettings(values, config.issuer, policy),
    mountables: {
      idp: idpMountable({ logger: logger.child({ service: "idp" }), env: idpEnv }),
      sessions: sessionsMount && loopbackCallersOnly(sessionsMount.handler),
    },
    runtime: (natives, hostCalls) =>
      engine
        ? inProcessScriptRuntime(engine, { natives, hostCalls, limits: config.limits })
        : threadScriptRuntime(platform.spawnScriptThread, { natives, hostCalls, limits: config.limits, threads }),
  });
}

/** The plan table as text: one line a route, so a reviewer sees at a glance what is public. */
function formatPlanTable(rows: RouteInfo[]): string {
  const header = ["METHOD", "PATTERN", "ACCESS", "RESOURCES", "CSRF", "ACTION", "AUDIT", "AT"];
  const lines = rows.map((r) => [
    r.kind === "route" ? r.method! : r.spaIndex !== undefined ? "SPA" : r.kind.toUpperCase(),
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
    config = await loadConfig(
      runtime,
      { positionals: args.positionals.slice(words - 1), flags: args.flags },
      command !== "audit" && command !== "resource" && command !== "types",
    );
  } catch (err) {
    if (err instanceof ConfigError) return fail(runtime, err.message);
    throw err;
  }
  if (args.positionals[0] === "bundle") return writeBundle(runtime, platform, config, lastFlag(args, "out"));
  if (args.positionals[0] === "types") return writeTypes(runtime, platform, config, lastFlag(args, "out"));
  if (args.positionals[0] === "audit" || args.positionals[0] === "resource") return storeCommand(runtime, config, args);
  const logger = serviceLogger(runtime, "routes");
  const json = lastFlag(args, "json") === "true";
  const listing = args.positionals[0] === "routes" || args.positionals[0] === "openapi";
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
    if (args.positionals[0] === "openapi") runtime.print(JSON.stringify(planOpenApi(host.routes(), { title: `routes: ${config.values.script}` }), null, 2));
    else runtime.print(json ? JSON.stringify(host.routes(), null, 2) : formatPlanTable(host.routes()));
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
  // Only the names this host is known by reach it (DNS rebinding), mounted services included.
  const address = parseListenAddress(config.values.addr);
  const hosts = hostAllowlist({ urls: [listenUrl(address), config.issuer], hosts: parseAllowedHosts(config.values["allowed-hosts"]) });
  const proxy = trustedProxy(config, "none");
  // The Host check first: a name it refuses may not even make a URL (invalid punycode), and the
  // access line reads the request's URL.
  const app = withAllowedHosts(
    withRequestId(
      {
        fetch: async (received: Request, receivedEnv: ServeEnv) => {
          const { request, env } = throughProxy(received, receivedEnv, proxy);
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
    ),
    hosts,
    envelopeMisdirected,
  );
  let server: RunningServer;
  try {
    server = await runtime.serve((req, env) => app.fetch(req, env), address);
  } catch (err) {
    await host.close();
    return fail(runtime, listenFailure("routes", config.values.addr, err).replace(/^routes: /, ""));
  }
  const { issuer } = config;
  logger.info("routes listening", {
    addr: `${server.hostname}:${server.port}`,
    allowed_hosts: describeAllowlist(hosts),
    script: config.scriptPath,
    routes: host.routes().length,
    dev: config.values.dev,
    threads,
    issuer: issuer || null,
  });
  warnIfHostCheckOff(logger, hosts);
  // The script's routes: the host's own (/auth/login, /auth/callback, ...) are not the user's.
  const rows = host.routes().filter((r) => r.source !== "host");
  const count = (access: string) => rows.filter((r) => r.access === access).length;
  printBanner(runtime, `route host  http://${server.hostname}:${server.port}`, [
    ["script", config.scriptPath],
    [
      "routes",
      `${count("public")} public, ${count("auth") + count("auth?")} authenticated, ${count("mount")} mounts, ${count("static")} static (${
        serviceCommand(runtime, "routes", "routes --script ...")
      } lists them)`,
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
    ["allowed hosts", describeAllowlist(hosts)],
    ["client address", proxy.kind === "none" ? undefined : `from ${config.values["trusted-proxy"]} (--trusted-proxy)`],
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

/** `routes types`: httpmod's declarations (script/httpmod-types.ts) for the configured assets modules. */
async function writeTypes(runtime: HostRuntime, platform: RoutesPlatform, config: Config, out: string | undefined): Promise<undefined> {
  const path = runtime.resolvePath(runtime.cwd(), out || "httpmod.d.ts");
  const cut = path.lastIndexOf("/");
  try {
    await runtime.ensureDir(path.slice(0, cut) || "/");
    await platform.files.writeText(path.slice(0, cut) || "/", path.slice(cut + 1), httpmodDeclarations({ assets: Object.keys(config.assets) }));
  } catch (err) {
    return fail(runtime, `cannot write ${path}: ${(err as Error).message}`);
  }
  runtime.print(`routes: wrote ${out || "httpmod.d.ts"} (add it to a jsconfig.json with checkJs, docs/routes.md "Types for editors")`);
  return undefined;
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
