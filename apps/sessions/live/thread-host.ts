/**
 * The thread side of the session pool (thread-pool.ts), runtime-free: each thread loads its own
 * QuickJS engine with a hard heap cap and keeps its sessions in-process. The thread entry files
 * (apps/sessions/node-thread.ts, deno-thread.ts) supply the endpoint and the worktree FileTree,
 * which cannot be copied from the main thread.
 */
import type { FileTree } from "../../../lib/files/tree.ts";
import { serveThreadCalls } from "../../../lib/thread-pool.ts";
import type { ThreadEndpoint } from "../../../lib/threads.ts";
import { loadQuickJS } from "../../../lib/sandbox/index.ts";
import { createInProcessRuntimes } from "./in-process.ts";
import type { FromThread, ToThread } from "./thread-pool.ts";
import type { LiveRuntimes } from "./types.ts";

/** The thread's end of the channel to the main thread. */
export type SessionThreadEndpoint = ThreadEndpoint<ToThread, FromThread>;

export interface ThreadSetup {
  worktrees: FileTree;
  /** The `http` module's transport (default: global fetch). */
  fetch?: typeof fetch;
}

export function serveSessionThread(endpoint: SessionThreadEndpoint, setup: ThreadSetup): void {
  let runtimes: LiveRuntimes;
  serveThreadCalls(endpoint, {
    async init({ hostEnv, modules, maxHeapMb }) {
      const engine = await loadQuickJS({ maxHeapMb });
      runtimes = createInProcessRuntimes(engine, { worktrees: setup.worktrees, fetch: setup.fetch, hostEnv, modules });
    },
    async handle(call, emit) {
      switch (call.op) {
        case "open":
          await runtimes.open(call.spec);
          return null;
        case "execute":
          return runtimes.execute(call.sessionId, call.request, emit);
        case "close":
          await runtimes.close(call.sessionId);
          return null;
      }
    },
  });
}
