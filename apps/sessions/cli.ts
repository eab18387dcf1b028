/**
 * The session service's command line, on any HostRuntime (Node or Deno):
 *
 *   sessions serve [--addr HOST:PORT] [--db URL] [--library-dir DIR] [--modules a,b] [--threads N]
 *                  [--worktree-roots DIR,DIR] [--auth-token TOKEN]
 *
 * Each flag has an environment variable (SESSIONS_*); the flag wins. Bad configuration prints one
 * line on stderr and exits with code 2. The entry file supplies what is runtime-specific: the
 * host file system as a FileTree, and its runtime's pool of sandbox threads.
 */
import { ConfigError } from "#lib/config";
import { lastFlag, parseCommandLine } from "#lib/config/flags";
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
  withAllowedHosts,
} from "#lib/http";
import { listenFailure, printBanner, serviceLogger } from "#lib/cli-output";
import { loadQuickJS } from "#lib/sandbox";
import { type HostRuntime, parseListenAddress, type RunningServer, type ServeEnv } from "#lib/runtime";
import { createSessionService, type SessionService } from "./app.ts";
import { parseModuleCatalog, sandboxHostEnv } from "./domain/modules.ts";
import { createInProcessRuntimes } from "./live/in-process.ts";
import { MODULE_CATALOG } from "./live/types.ts";
import { type SessionsHost, webUi, worktreeRoots } from "./host.ts";

export { type SessionsHost, uiDirectoryOf, webUi, worktreeRoots } from "./host.ts";

export const USAGE = `usage: sessions serve [options]

options (flag / environment variable / default):
  --addr HOST:PORT      SESSIONS_ADDR            127.0.0.1:3210
  --db URL              SESSIONS_DB              file:./data/sessions.db
      file:PATH (embedded libSQL), :memory:, or a libSQL server (libsql://, https://, wss://);
      SESSIONS_DB_AUTH_TOKEN is sent to a server
  --library-dir DIR     SESSIONS_LIBRARY_DIR     ./libraries
      where library names are looked up (not / or the home directory as a whole)
  --worktree-roots LIST SESSIONS_WORKTREE_ROOTS  the start directory and the temp directory
      directories (comma-separated, repeatable) a session's worktree_path must be inside,
      after symlinks; never / or the home directory as a whole
  --auth-token TOKEN    SESSIONS_AUTH_TOKEN      none
      every request but GET /api/v1/health then needs it (Authorization: Bearer, or the
      cookie the printed link sets); required to listen beyond loopback (16+ characters)
  --modules LIST        SESSIONS_MODULES         ${MODULE_CATALOG.join(",")}
      the module catalog templates may use (comma-separated subset; "" for none)
  --threads N           SESSIONS_THREADS         2
      sandbox threads; each session is pinned to one, so a long execution never blocks the
      server; 0 runs sandboxes on the server's own thread (debugging only)
  --allowed-hosts LIST  SESSIONS_ALLOWED_HOSTS   none
      host names answered beyond loopback and localhost (comma-separated; .domain for its
      subdomains; * for any): any other Host header gets 421 (DNS rebinding)
  -h, --help            this text
also honored: LOG_LEVEL (debug, info, warn, error, silent)`;

const FLAGS = {
  addr: {},
  db: {},
  "library-dir": {},
  modules: {},
  threads: {},
  "worktree-roots": {},
  "auth-token": {},
  "allowed-hosts": {},
  help: { boolean: true },
};

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

function parseThreads(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 64) throw new Error(`--threads must be a whole number from 0 to 64, got "${value}"`);
  return n;
}

export async function runSessionsCli(runtime: HostRuntime, host: SessionsHost, argv: string[] = runtime.args): Promise<RunningServer | undefined> {
  let args;
  try {
    args = parseCommandLine(argv, FLAGS);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return fail(runtime, err.message);
  }
  if (lastFlag(args, "help") === "true") {
    runtime.print(USAGE);
    return undefined;
  }
  const [command, ...extra] = args.positionals;
  if (command !== "serve" || extra.length > 0) {
    return fail(runtime, command === undefined ? "a command is needed" : `unknown command ${[command, ...extra].join(" ")}`);
  }

  const setting = (flag: string, env: string, fallback: string) => lastFlag(args, flag) ?? runtime.env[env] ?? fallback;
  let modules;
  let address;
  let threads;
  try {
    modules = parseModuleCatalog(setting("modules", "SESSIONS_MODULES", MODULE_CATALOG.join(",")));
    address = parseListenAddress(setting("addr", "SESSIONS_ADDR", "127.0.0.1:3210"));
    threads = parseThreads(setting("threads", "SESSIONS_THREADS", "2"));
  } catch (err) {
    return fail(runtime, (err as Error).message);
  }
  const token = setting("auth-token", "SESSIONS_AUTH_TOKEN", "").trim();
  const tokenProblem = accessTokenCheck(token, address.hostname);
  if (tokenProblem) return fail(runtime, tokenProblem);
  let hosts;
  try {
    hosts = hostAllowlist({ urls: [listenUrl(address)], hosts: parseAllowedHosts(setting("allowed-hosts", "SESSIONS_ALLOWED_HOSTS", "")) });
  } catch (err) {
    return fail(runtime, (err as Error).message);
  }
  const dbUrl = setting("db", "SESSIONS_DB", "file:./data/sessions.db");
  const libraryDir = runtime.resolvePath(runtime.cwd(), setting("library-dir", "SESSIONS_LIBRARY_DIR", "./libraries"));
  let roots;
  try {
    const rootsFlag = args.flags.get("worktree-roots");
    roots = await worktreeRoots(runtime, host.paths, rootsFlag ? rootsFlag.join(",") : runtime.env.SESSIONS_WORKTREE_ROOTS);
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
  logger.info("sessions listening", { addr: `${server.hostname}:${server.port}`, db: dbUrl, library_dir: libraryDir, modules, threads });
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
