/**
 * LiveRuntimes with every sandbox in the calling thread: for tests, and the building block of
 * each worker thread (thread-host.ts: the sandbox side) and Durable Object. A running execution holds this thread
 * for up to `cpu_ms`, so servers use the thread pool (Node, Deno) or Durable Objects (workerd).
 */
import type { SandboxEngine } from "#lib/sandbox";
import { SessionRuntime } from "./session-runtime.ts";
import { type ExecutionOutcome, type ExecutionRequest, type LiveEvent, LiveRuntimeError, type LiveRuntimeOptions, type LiveRuntimes } from "./types.ts";

/** In process, an execution may also take a cancel flag that another thread sets (thread-host.ts). */
export interface InProcessRuntimes extends LiveRuntimes {
  execute(sessionId: string, request: ExecutionRequest, onEvent: (event: LiveEvent) => void, cancelFlag?: Int32Array): Promise<ExecutionOutcome>;
}

export function createInProcessRuntimes(engine: SandboxEngine, options: LiveRuntimeOptions): InProcessRuntimes {
  const live = new Map<string, SessionRuntime>();
  const opening = new Set<string>();
  return {
    async open(spec) {
      if (live.has(spec.sessionId) || opening.has(spec.sessionId)) throw new LiveRuntimeError("STARTUP_FAILED", `session ${spec.sessionId} is already live`);
      opening.add(spec.sessionId);
      try {
        live.set(spec.sessionId, await SessionRuntime.open(engine, spec, options));
      } finally {
        opening.delete(spec.sessionId);
      }
    },
    async execute(sessionId, request, onEvent, cancelFlag) {
      const session = live.get(sessionId);
      if (!session) throw new LiveRuntimeError("SESSION_NOT_LIVE", `session ${sessionId} is not live`);
      try {
        return await session.execute(request, onEvent, cancelFlag);
      } finally {
        if (!session.live && live.get(sessionId) === session) live.delete(sessionId);
      }
    },
    async cancel(sessionId) {
      return live.get(sessionId)?.cancel() ?? false;
    },
    async close(sessionId) {
      live.get(sessionId)?.close();
      live.delete(sessionId);
    },
    liveIds: () => [...live.keys()],
    async shutdown() {
      for (const session of live.values()) session.close();
      live.clear();
    },
  };
}
