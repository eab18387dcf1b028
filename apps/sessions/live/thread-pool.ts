/**
 * LiveRuntimes over the shared thread pool (lib/sandbox-host/pool.ts): each session is pinned to one
 * thread (the one with the fewest sessions when it opened), and the main thread only passes
 * messages. Events are posted back one by one as they are produced.
 *
 * Failure handling is the pool's: a thread that exits (crash) or stays silent past an execution's
 * `wall_ms` plus `graceMs` (hung in a native operation QuickJS cannot interrupt) is terminated and
 * replaced. The execution running on it rejects with RUNTIME_LOST; every other session that lived
 * on the thread is reported through `onLost`.
 */
import { CodedError } from "#lib/errors";
import {
  createThreadPool,
  MESSAGE_NOT_SENT,
  type PoolMessage,
  type PoolReply,
  type PoolThread,
  type SandboxThreadInit,
  type SpawnThread,
  ThreadCallError,
} from "#lib/sandbox-host";
import {
  type ExecutionOutcome,
  type ExecutionRequest,
  type LiveErrorCode,
  type LiveEvent,
  LiveRuntimeError,
  type LiveRuntimeOptions,
  type LiveRuntimes,
  type ModuleName,
  sessionBusy,
  type SessionSpec,
} from "./types.ts";

// ---- protocol ------------------------------------------------------------------------------------

/** What a thread needs to build its runtimes (plain data: it is copied to the thread). */
export interface ThreadInit extends SandboxThreadInit {
  hostEnv: Record<string, string | undefined>;
  modules?: readonly ModuleName[];
}

export type SessionCall =
  | { op: "open"; spec: SessionSpec }
  | { op: "execute"; sessionId: string; request: ExecutionRequest; cancelFlag?: Int32Array }
  | { op: "cancel"; sessionId: string }
  | { op: "close"; sessionId: string };

export type ToThread = PoolMessage<ThreadInit, SessionCall>;
export type FromThread = PoolReply<ExecutionOutcome | null, LiveEvent>;

/** The main thread's end of one session thread. */
type SpawnSessionThread = SpawnThread<ToThread, FromThread>;

// ---- pool ----------------------------------------------------------------------------------------

export interface ThreadPoolOptions {
  /** Threads in the pool (default 2). */
  threads?: number;
  /** Hard cap of each thread's QuickJS heap, MiB (default 1024). */
  maxHeapMb?: number;
  /** How long past `wall_ms` a silent thread is given before it is deemed hung (default 2000). */
  graceMs?: number;
  /** Host variables `env` capabilities may expose (copied to each thread). */
  hostEnv?: Record<string, string | undefined>;
  /** The deployment's module catalog. */
  modules?: readonly ModuleName[];
  /** Sessions whose thread died, except the one whose execution rejected with RUNTIME_LOST. */
  onLost?: LiveRuntimeOptions["onLost"];
}

/** A call whose request or result the thread channel could not copy (MESSAGE_NOT_SENT). */
class NotSent extends CodedError<typeof MESSAGE_NOT_SENT> {
  constructor(message: string) {
    super(MESSAGE_NOT_SENT, message);
  }
}

/** Per thread: the sessions pinned there, and those with an open or execute call in flight. */
interface Pinned {
  sessions: Set<string>;
  calling: Set<string>;
}

export function createThreadRuntimes(spawn: SpawnSessionThread, options: ThreadPoolOptions = {}): LiveRuntimes {
  const graceMs = options.graceMs ?? 2000;
  const init: ThreadInit = { hostEnv: { ...(options.hostEnv ?? {}) }, modules: options.modules, maxHeapMb: options.maxHeapMb ?? 1024 };
  /** Live sessions: their thread and the wall-time limit their watchdog needs. */
  const live = new Map<string, { thread: PoolThread<Pinned>; wallMs: number }>();
  const busy = new Set<string>();
  /** The cancel flag of each running execution: shared memory the thread's interrupt handler reads,
   * since a thread that spins in QuickJS never reads its messages. */
  const cancelFlags = new Map<string, Int32Array>();
  const pool = createThreadPool<ThreadInit, SessionCall, ExecutionOutcome | null, LiveEvent, Pinned>(spawn, {
    size: options.threads ?? 2,
    init: () => init,
    newState: () => ({ sessions: new Set(), calling: new Set() }),
    onThreadLost(thread, reason) {
      const lost: string[] = [];
      for (const id of thread.state.sessions) {
        if (live.get(id)?.thread === thread) live.delete(id);
        busy.delete(id);
        // A session whose call failed with the thread learns it from that call.
        if (!thread.state.calling.has(id)) lost.push(id);
      }
      thread.state.sessions.clear();
      if (lost.length > 0) options.onLost?.(lost, reason);
    },
  });

  /** A call for one session; failures become LiveRuntimeErrors (`lostCode` when the thread died). */
  async function call(
    thread: PoolThread<Pinned>,
    req: SessionCall & { op: "open" | "execute" },
    timeoutMs: number,
    lostCode: LiveErrorCode,
    onEvent?: (e: LiveEvent) => void,
  ) {
    const sessionId = req.op === "open" ? req.spec.sessionId : req.sessionId;
    thread.state.calling.add(sessionId);
    try {
      return await pool.call(thread, req, timeoutMs, onEvent);
    } catch (err) {
      if (!(err instanceof ThreadCallError)) throw err;
      // A request or result the channel could not copy failed alone: the thread is fine.
      if (err.code === MESSAGE_NOT_SENT) throw new NotSent(err.message);
      throw new LiveRuntimeError((err.lost ? undefined : (err.code as LiveErrorCode | undefined)) ?? lostCode, err.message);
    } finally {
      thread.state.calling.delete(sessionId);
    }
  }

  const notLive = (sessionId: string) => new LiveRuntimeError("SESSION_NOT_LIVE", `session ${sessionId} is not live`);
  let shuttingDown = false;

  return {
    async open(spec) {
      if (shuttingDown) throw new LiveRuntimeError("STARTUP_FAILED", "the server is shutting down");
      if (pool.threads().some((t) => t.state.sessions.has(spec.sessionId))) {
        throw new LiveRuntimeError("STARTUP_FAILED", `session ${spec.sessionId} is already live`);
      }
      const thread = pool.pick((a, b) => a.state.sessions.size < b.state.sessions.size);
      thread.state.sessions.add(spec.sessionId);
      // Each library and startup file may run up to wall_ms.
      const steps = spec.libraries.length + spec.startupFiles.length + 1;
      try {
        await call(thread, { op: "open", spec }, steps * spec.settings.limits.wall_ms + graceMs, "STARTUP_FAILED");
        live.set(spec.sessionId, { thread, wallMs: spec.settings.limits.wall_ms });
      } catch (err) {
        thread.state.sessions.delete(spec.sessionId);
        if (err instanceof NotSent) {
          // The thread may have opened the runtime before its answer failed to come back.
          if (!thread.dead) await pool.call(thread, { op: "close", sessionId: spec.sessionId }, graceMs).catch(() => {});
          throw new LiveRuntimeError("STARTUP_FAILED", err.message);
        }
        throw err;
      }
    },

    async execute(sessionId, request, onEvent) {
      const entry = live.get(sessionId);
      if (!entry) throw notLive(sessionId);
      if (busy.has(sessionId)) throw sessionBusy(sessionId);
      busy.add(sessionId);
      const cancelFlag = new Int32Array(new SharedArrayBuffer(4));
      cancelFlags.set(sessionId, cancelFlag);
      try {
        return (await call(entry.thread, { op: "execute", sessionId, request, cancelFlag }, entry.wallMs + graceMs, "RUNTIME_LOST", onEvent))!;
      } catch (err) {
        // This execution alone fails; the session and its thread are unharmed.
        if (err instanceof NotSent) {
          return { status: "error", error: { message: err.message, stack: "" }, metrics: { duration_ms: 0, events: 0, output_bytes: 0 } };
        }
        if (err instanceof LiveRuntimeError && err.code === "RUNTIME_LOST" && live.get(sessionId) === entry) {
          live.delete(sessionId);
          entry.thread.state.sessions.delete(sessionId);
        }
        throw err;
      } finally {
        busy.delete(sessionId);
        if (cancelFlags.get(sessionId) === cancelFlag) cancelFlags.delete(sessionId);
      }
    },

    async cancel(sessionId) {
      const flag = cancelFlags.get(sessionId);
      const entry = live.get(sessionId);
      if (!flag || !entry) return false;
      Atomics.store(flag, 0, 1);
      // The message ends a wait (timer, host call) at once; code that spins has seen the flag. The
      // thread may still be inside a native operation QuickJS cannot interrupt: its watchdog is the
      // execution's own, not a shorter one that would replace the thread for it.
      if (!entry.thread.dead) await pool.call(entry.thread, { op: "cancel", sessionId }, entry.wallMs + graceMs).catch(() => {});
      return true;
    },

    async close(sessionId) {
      const entry = live.get(sessionId);
      if (!entry) return;
      live.delete(sessionId);
      entry.thread.state.sessions.delete(sessionId);
      // Closing never fails: a thread that cannot answer is replaced by the watchdog anyway.
      if (!entry.thread.dead) await pool.call(entry.thread, { op: "close", sessionId }, entry.wallMs + graceMs).catch(() => {});
    },

    liveIds: () => [...live.keys()],

    async shutdown() {
      shuttingDown = true;
      pool.shutdown();
      live.clear();
      busy.clear();
    },
  };
}
