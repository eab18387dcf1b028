/**
 * The session service's command line, on any HostRuntime (Node or Deno):
 *
 *   sessions serve [--addr HOST:PORT] [--db URL] [--library-dir DIR] [--modules a,b] [--threads N]
 *                  [--worktree-roots DIR,DIR] [--auth-token TOKEN] [--config-file FILE] [--profile NAME]
 *
 * Settings are the `sessions:` section (config.ts): flags > SESSIONS_* environment > config
 * files > profile > defaults. Bad configuration prints one line on stderr and exits with code 2.
 * The entry file supplies what is runtime-specific: the host file system as a FileTree, and its
 * runtime's pool of sandbox threads.
 */
import { ConfigError } from "#lib/config";
import { lastFlag, parseCommandLine, type ParsedArgs } from "#lib/config/flags";
import { openSqlStore } from "#lib/db/open";
import { refuseTooBroad, RootsError } from "#lib/files";
import {
  accessTokenProblem,
  describeAllowlist,
  envelopeMisdirected,
  hostAllowlist,
  listensBeyondLoopback,
  listenUrl,
  parseAllowedHosts,
  warnIfHostCheckOff,
  withAllowedHosts,
} from "#lib/http";
import { configSourcesLine, listenFailure, printBanner, serviceLogger } from "#lib/cli-output";
import { loadQuickJS } from "#lib/sandbox";
import { type HostRuntime, parseListenAddress, type RunningServer, type ServeEnv } from "#lib/runtime";
import { createSessionService, type SessionService } from "./app.ts";
import { parseModuleCatalog, sandboxHostEnv } from "./domain/modules.ts";
import { createInProcessRuntimes } from "./live/in-process.ts";
import { type SessionsHost, webUi, worktreeRoots } from "./host.ts";
import { loadSessionsConfig, SESSIONS_FLAGS, type SessionsConfig, USAGE } from "./config.ts";

export type { SessionsHost } from "./host.ts";

/** Refuses to listen beyond loopback without a token, and a token too weak to be one. */
function accessTokenCheck(token: string, hostname: string): string | undefined {
  const problem = token === "" ? undefined : accessTokenProblem(token);
  if (problem) return `--auth-token (SESSIONS_AUTH_TOKEN) ${problem}`;
  if (token === "" && listensBeyondLoopback(hostname)) {
    return `refusing to listen on ${hostname} without an access token: anyone who can reach it could run code and read files as you. ` +
      "Set --auth-token or SESSIONS_AUTH_TOKEN (e.g. SESSIONS_AUTH_TOKEN=$(openssl rand -hex 32)), or listen on 127.0.0.1";
  }
  return undefined;
}

export async function runSessionsCli(runtime: HostRuntime, host: SessionsHost, argv: string[] = runtime.args): Promise<RunningServer | undefined> {
  let args: ParsedArgs;
  let config: SessionsConfig;
  try {
    args = parseCommandLine(argv, SESSIONS_FLAGS);
    if (lastFlag(args, "help") === "true") {
      runtime.print(USAGE);
      return undefined;
    }
    const [command, ...extra] = args.positionals;
    if (command !== "serve" || extra.length > 0) {
      return fail(runtime, command === undefined ? "a command is needed" : `unknown command ${[command, ...extra].join(" ")}`);
    }
    config = await loadSessionsConfig(runtime, { positionals: [], flags: args.flags });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return fail(runtime, err.message);
  }
  const { values } = config;
  // Checked by the section already: these parse.
  const modules = parseModuleCatalog(values.modules);
  const address = parseListenAddress(values.addr);
  const threads = Number(values.threads);
  const token = values["auth-token"];
  const tokenProblem = accessTokenCheck(token, address.hostname);
  if (tokenProblem) return fail(runtime, tokenProblem);
  let hosts;
  try {
    hosts = hostAllowlist({ urls: [listenUrl(address)], hosts: parseAllowedHosts(values["allowed-hosts"]) });
  } catch (err) {
    return fail(runtime, (err as Error).message);
  }
  const dbUrl = values.db;
  const libraryDir = runtime.resolvePath(runtime.cwd(), values["library-dir"]);
  let roots;
  try {
    const rootsSetting = values["worktree-roots"];
    roots = await worktreeRoots(runtime, host.paths, rootsSetting.length > 0 ? rootsSetting.join(",") : undefined);
    // Library names are confined to the directory, so the directory bounds what a client reads.
    await refuseTooBroad(host.paths.realPath, libraryDir, runtime.env.HOME || undefined, "the library directory");
  } catch (err) {
    if (!(err instanceof RootsError)) throw err;
    return fail(runtime, `--worktree-roots / --library-dir: ${err.message}`);
  }
  const logger = serviceLogger(runtime, "sessions");

  let store;
  try {
    store = await openSqlStore(runtime, dbUrl, runtime.env.SESSIONS_DB_AUTH_TOKEN);
  } catch (err) {
    return fail(runtime, (err as Error).message);
  }
  // Runtimes that die on their own are reported to the service, which exists only afterwards.
  let lost: SessionService["runtimesLost"] = () => {};
  const onLost = (ids: string[], reason: string) => lost(ids, reason);
  const hostEnv = sandboxHostEnv(runtime.env);
  const live = threads === 0
    ? createInProcessRuntimes(await loadQuickJS(), { worktrees: host.files, hostEnv, modules, onLost })
    : host.threadRuntimes({ threads, hostEnv, modules, onLost });
  const ui = await webUi(host);
  const service = createSessionService({
    store,
    live,
    worktrees: host.files,
    libraries: { tree: host.files, root: libraryDir },
    modules,
    logger,
    ui,
    memory: () => runtime.memoryUsage(),
    worktreeRoots: roots,
    access: token ? { token } : {},
  });
  lost = service.runtimesLost;
  await service.ready;
  const guarded = withAllowedHosts({ fetch: (req: Request, env: ServeEnv) => service.app.fetch(req, env) }, hosts, envelopeMisdirected);
  let server: Awaited<ReturnType<typeof runtime.serve>>;
  try {
    server = await runtime.serve((req, env) => guarded.fetch(req, env), address);
  } catch (err) {
    runtime.printError(listenFailure("sessions", `${address.hostname}:${address.port}`, err));
    await service.shutdown();
    await store.close();
    return runtime.exit(1);
  }
  logger.info("sessions listening", {
    addr: `${server.hostname}:${server.port}`,
    db: dbUrl,
    library_dir: libraryDir,
    modules,
    threads,
    allowed_hosts: describeAllowlist(hosts),
  });
  warnIfHostCheckOff(logger, hosts);
  const base = `http://${server.hostname}:${server.port}/api/v1`;
  // With a token, the link signs a browser in (a cookie) and drops the token from the address.
  const signIn = token ? `?token=${encodeURIComponent(token)}` : "";
  printBanner(runtime, `session service  http://${server.hostname}:${server.port}`, [
    ["web UI", ui ? `http://${server.hostname}:${server.port}/${signIn}` : "not built (npm run build:ui)"],
    ["API", token ? `${base} (Authorization: Bearer <token>; /health open)` : base],
    ["OpenAPI", `${base}/openapi.json`],
    ["data", dbUrl.startsWith("file:") ? `${dbUrl} (${runtime.resolvePath(runtime.cwd(), dbUrl.slice(5))})` : dbUrl.replace(/\/\/[^@/]*@/, "//***@")],
    ["libraries", libraryDir],
    ["worktree roots", roots.roots.join(", ")],
    ["modules", modules.length > 0 ? modules.join(", ") : "none"],
    ["threads", threads === 0 ? "0 (sandboxes on the serving thread)" : String(threads)],
    ["allowed hosts", describeAllowlist(hosts)],
    ["config", configSourcesLine(config.profile, config.sources)],
  ]);
  runtime.onShutdown(async () => {
    // Runtimes first: executions in flight end (stored as errors) and their responses go out,
    // so the server drains quickly; the store closes last.
    logger.info("sessions shutting down");
    await service.shutdown();
    logger.debug("runtimes closed");
    await server.close();
    logger.debug("server closed");
    await store.close();
    logger.info("sessions stopped");
  });
  return server;
}

function fail(runtime: HostRuntime, message: string): never {
  runtime.printError(`sessions: ${message}\n${USAGE}`);
  return runtime.exit(2);
}
