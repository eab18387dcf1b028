/**
 * LiveRuntimes with every sandbox in the calling thread (the in-process mode and tests). A running
 * execution holds this thread for up to `cpu_ms`, so servers use the thread pool (Node, Deno) or
 * Durable Objects (workerd). The sandbox side of a pool thread (thread-host.ts) holds its
 * SessionRuntimes the same way, through `executeOn`.
 */
import type { SandboxEngine } from "#lib/sandbox";
import { SessionRuntime } from "./session-runtime.ts";
import {
  type ExecutionOutcome,
  type ExecutionRequest,
  type LiveEvent,
  LiveRuntimeError,
  type LiveRuntimeOptions,
  type LiveRuntimes,
  sessionBusy,
} from "./types.ts";

/**
 * Runs an execution on a session of `live` (SESSION_NOT_LIVE when it has none); a session whose
 * sandbox broke under it is dropped from `live`.
 */
export async function executeOn(
  live: Map<string, SessionRuntime>,
  sessionId: string,
  request: ExecutionRequest,
  onEvent: (event: LiveEvent) => void,
  cancelFlag?: Int32Array,
): Promise<ExecutionOutcome> {
  const session = live.get(sessionId);
  if (!session) throw new LiveRuntimeError("SESSION_NOT_LIVE", `session ${sessionId} is not live`);
  try {
    return await session.execute(request, onEvent, cancelFlag);
  } finally {
    if (!session.live && live.get(sessionId) === session) live.delete(sessionId);
  }
}

export function createInProcessRuntimes(engine: SandboxEngine, options: LiveRuntimeOptions): LiveRuntimes {
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
    async execute(sessionId, request, onEvent) {
      if (live.get(sessionId)?.busy) throw sessionBusy(sessionId);
      return executeOn(live, sessionId, request, onEvent);
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
