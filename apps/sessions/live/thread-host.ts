/**
 * The session service's sandbox side on a thread of the pool (thread-pool.ts), runtime-free: the
 * shared thread entry (lib/sandbox-host) loads the thread's engine with its heap cap, and this side
 * holds the SessionRuntimes of the sessions pinned to the thread. Which sessions are live, and
 * that each opens once, is the main thread's (thread-pool.ts); this side runs what it is sent.
 * The thread entry files
 * (apps/sessions/entries/node-thread.ts, deno-thread.ts) supply the endpoint and the worktree FileTree,
 * which cannot be copied from the main thread.
 */
import type { FileTree } from "#lib/files";
import { type SandboxSide, serveSandboxThread, type ThreadEndpoint } from "#lib/sandbox-host";
import type { SandboxEngine } from "#lib/sandbox";
import { executeOn } from "./in-process.ts";
import { SessionRuntime } from "./session-runtime.ts";
import type { ExecutionOutcome, LiveEvent } from "./types.ts";
import type { FromThread, SessionCall, ThreadInit, ToThread } from "./thread-pool.ts";

/** The thread's end of the channel to the main thread. */
type SessionThreadEndpoint = ThreadEndpoint<ToThread, FromThread>;

interface ThreadSetup {
  worktrees: FileTree;
  /** The `http` module's transport (default: global fetch). */
  fetch?: typeof fetch;
}

/** Sessions in this thread's engine; each call names its session. */
function sessionSide(
  engine: SandboxEngine,
  { hostEnv, modules }: ThreadInit,
  setup: ThreadSetup,
): SandboxSide<SessionCall, ExecutionOutcome | null, LiveEvent> {
  const options = { worktrees: setup.worktrees, fetch: setup.fetch, hostEnv, modules };
  const sessions = new Map<string, SessionRuntime>();
  return {
    async handle(call, emit) {
      switch (call.op) {
        case "open":
          sessions.set(call.spec.sessionId, await SessionRuntime.open(engine, call.spec, options));
          return null;
        case "execute":
          return executeOn(sessions, call.sessionId, call.request, emit, call.cancelFlag);
        case "cancel":
          // Wakes an execution waiting on a timer or a host call; spinning code has seen the flag.
          sessions.get(call.sessionId)?.cancel();
          return null;
        case "close":
          sessions.get(call.sessionId)?.close();
          sessions.delete(call.sessionId);
          return null;
      }
    },
  };
}

export function serveSessionThread(endpoint: SessionThreadEndpoint, setup: ThreadSetup): void {
  serveSandboxThread(endpoint, (engine, init) => sessionSide(engine, init, setup));
}
