/**
 * The session service inside another host (the route host's `require("sessions").handler()`): the
 * public factory other apps use instead of this app's internals. Started on first use, its
 * sandboxes on one thread of the host's pool, its rows in `ROUTES_SESSIONS_DB` (default `:memory:`,
 * so it never shares a file with a session service started beside it).
 *
 * It never listens: the host's route (its sign-in and policy) is the only way in, so it asks for
 * no access token. Worktrees are confined as in the daemon: to `SESSIONS_WORKTREE_ROOTS`, or the
 * working directory and the temp directory.
 */
import { openSqlStore } from "#lib/db/open";
import type { Logger } from "#lib/log";
import type { FetchHandler, HostRuntime } from "#lib/runtime";
import { type SessionsHost, webUi, worktreeRoots } from "./host.ts";

export type { SessionsHost } from "./host.ts";
export { uiDirectoryOf } from "./host.ts";

export interface EmbeddedSessions {
  handler: FetchHandler;
  /** Ends the live sandboxes and closes the store, if the service was ever started. */
  close(): Promise<void>;
}

export function embeddedSessionService(runtime: HostRuntime, host: SessionsHost, logger?: Logger): EmbeddedSessions {
  let started: Promise<{ fetch: FetchHandler; close(): Promise<void> }> | undefined;
  const start = async () => {
    // Loaded on first use: a host that never serves the session service never pays for it.
    const [{ createSessionService }, { sandboxHostEnv }] = await Promise.all([import("./app.ts"), import("./domain/modules.ts")]);
    const roots = await worktreeRoots(runtime, host.paths, runtime.env.SESSIONS_WORKTREE_ROOTS);
    const store = await openSqlStore(runtime, runtime.env.ROUTES_SESSIONS_DB || ":memory:");
    let lost: (ids: string[], reason: string) => void = () => {};
    const live = host.threadRuntimes({ threads: 1, hostEnv: sandboxHostEnv(runtime.env), onLost: (ids, reason) => lost(ids, reason) });
    const service = createSessionService({
      store,
      live,
      worktrees: host.files,
      libraries: { tree: host.files, root: runtime.resolvePath(runtime.cwd(), "libraries") },
      logger,
      accessLog: false,
      ui: await webUi(host),
      memory: () => runtime.memoryUsage(),
      worktreeRoots: roots,
    });
    lost = service.runtimesLost;
    await service.ready;
    return {
      fetch: (request: Request, env: Parameters<FetchHandler>[1]) => service.app.fetch(request, env),
      close: async () => {
        await service.shutdown();
        await store.close();
      },
    };
  };
  return {
    handler: async (request, env) => (await (started ??= start())).fetch(request, env),
    close: async () => {
      if (started) await (await started).close();
    },
  };
}
