/**
 * The thread side of the pool (thread-pool.ts), runtime-free: each thread loads its own QuickJS
 * engine with a hard heap cap and keeps its sessions in-process. The thread entry files
 * (apps/sessions/node-thread.ts, deno-thread.ts) supply the endpoint and the worktree FileTree,
 * which cannot be copied from the main thread.
 */
import type { FileTree } from "../../../lib/files/tree.ts";
import type { ThreadEndpoint } from "../../../lib/threads.ts";
import { loadQuickJS } from "../../../lib/sandbox/index.ts";
import { createInProcessRuntimes } from "./in-process.ts";
import type { FromThread, ToThread } from "./thread-pool.ts";
import { LiveRuntimeError, type ExecutionOutcome, type LiveRuntimes } from "./types.ts";

/** The thread's end of the channel to the main thread. */
export type SessionThreadEndpoint = ThreadEndpoint<ToThread, FromThread>;

export interface ThreadSetup {
  worktrees: FileTree;
  /** The `http` module's transport (default: global fetch). */
  fetch?: typeof fetch;
}

export function serveSessionThread(endpoint: SessionThreadEndpoint, setup: ThreadSetup): void {
  let runtimes: Promise<LiveRuntimes> | undefined;

  async function answer(id: number, work: (r: LiveRuntimes) => Promise<ExecutionOutcome | void>): Promise<void> {
    try {
      if (!runtimes) throw new Error("the thread was not initialised");
      const outcome = await work(await runtimes);
      endpoint.post(outcome ? { t: "done", id, outcome } : { t: "done", id });
    } catch (err) {
      const code = err instanceof LiveRuntimeError ? err.code : undefined;
      endpoint.post({ t: "fail", id, code, message: err instanceof Error ? err.message : String(err) });
    }
  }

  endpoint.listen((message) => {
    switch (message.t) {
      case "init": {
        const { hostEnv, modules, maxHeapMb } = message.init;
        runtimes = loadQuickJS({ maxHeapMb }).then((engine) => createInProcessRuntimes(engine, { worktrees: setup.worktrees, fetch: setup.fetch, hostEnv, modules }));
        // Ready either way: a failed engine load fails each request with its message.
        void runtimes.then(
          () => endpoint.post({ t: "ready" }),
          () => endpoint.post({ t: "ready" }),
        );
        return;
      }
      case "open":
        return void answer(message.id, (r) => r.open(message.spec));
      case "execute":
        return void answer(message.id, (r) => r.execute(message.sessionId, message.request, (event) => endpoint.post({ t: "event", id: message.id, event })));
      case "close":
        return void answer(message.id, (r) => r.close(message.sessionId));
    }
  });
}
