/**
 * LiveRuntimes over a pool of threads (Node worker_threads, Deno Web Workers), runtime-free: the
 * threads are reached through `ThreadPort`s made by a spawn adapter (lib/adapters/*-threads.ts).
 *
 * A sandbox runs synchronously, so it must not run on the thread that serves HTTP: each session
 * is pinned to one thread of the pool (the one with the fewest sessions when it opened), and the
 * main thread only passes messages. Events are posted back one by one as they are produced.
 *
 * Failure handling: a thread that exits (crash) or stays silent past an execution's `wall_ms`
 * plus `graceMs` (hung in a native operation QuickJS cannot interrupt) is terminated and
 * replaced. The execution running on it rejects with RUNTIME_LOST; every other session that lived
 * on the thread is reported through `onLost`.
 */
import {
  LiveRuntimeError,
  type SessionSpec,
  type ExecutionOutcome,
  type ExecutionRequest,
  type LiveErrorCode,
  type LiveEvent,
  type LiveRuntimeOptions,
  type LiveRuntimes,
  type ModuleName,
} from "./types.ts";
import type { SpawnThread, ThreadPort } from "../../../lib/threads.ts";

// ---- protocol ------------------------------------------------------------------------------------

/** What a thread needs to build its runtimes (plain data: it is copied to the thread). */
export interface ThreadInit {
  hostEnv: Record<string, string | undefined>;
  modules?: readonly ModuleName[];
  /** Hard cap of the thread's QuickJS heap (loadQuickJS maxHeapMb). */
  maxHeapMb: number;
}

export type ToThread =
  | { t: "init"; init: ThreadInit }
  | { t: "open"; id: number; spec: SessionSpec }
  | { t: "execute"; id: number; sessionId: string; request: ExecutionRequest }
  | { t: "close"; id: number; sessionId: string };

export type FromThread =
  | { t: "ready" }
  | { t: "event"; id: number; event: LiveEvent }
  | { t: "done"; id: number; outcome?: ExecutionOutcome }
  | { t: "fail"; id: number; code?: LiveErrorCode; message: string };

/** The main thread's end of one session thread. */
export type SessionThreadPort = ThreadPort<ToThread, FromThread>;
export type SpawnSessionThread = SpawnThread<ToThread, FromThread>;

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

interface Pending {
  kind: ToThread["t"];
  sessionId: string;
  resolve: (outcome: ExecutionOutcome | undefined) => void;
  reject: (err: Error) => void;
  onEvent?: (event: LiveEvent) => void;
  /** How long the thread may take once it is ready; then the watchdog timer. */
  timeoutMs: number;
  timer?: ReturnType<typeof setTimeout>;
}

interface Thread {
  port: SessionThreadPort;
  /** The thread has loaded its engine: watchdogs run only from then on (startup takes ~1 s). */
  ready: boolean;
  /** Sessions pinned here (opening or live). */
  sessions: Set<string>;
  pending: Map<number, Pending>;
  dead: boolean;
}

export function createThreadRuntimes(spawn: SpawnSessionThread, options: ThreadPoolOptions = {}): LiveRuntimes {
  const size = Math.max(1, options.threads ?? 2);
  const graceMs = options.graceMs ?? 2000;
  const init: ThreadInit = { hostEnv: { ...(options.hostEnv ?? {}) }, modules: options.modules, maxHeapMb: options.maxHeapMb ?? 1024 };
  const threads: Thread[] = [];
  /** Live sessions: their thread and the wall-time limit their watchdog needs. */
  const live = new Map<string, { thread: Thread; wallMs: number }>();
  const busy = new Set<string>();
  let nextId = 1;
  let shuttingDown = false;

  function start(): Thread {
    const port = spawn();
    const thread: Thread = { port, ready: false, sessions: new Set(), pending: new Map(), dead: false };
    port.listen(
      (message) => onMessage(thread, message),
      (reason) => lose(thread, `the session's thread exited: ${reason}`),
    );
    port.post({ t: "init", init });
    threads.push(thread);
    return thread;
  }

  function onMessage(thread: Thread, message: FromThread): void {
    if (message.t === "ready") {
      thread.ready = true;
      for (const p of thread.pending.values()) watch(thread, p);
      return;
    }
    const pending = thread.pending.get(message.id);
    if (!pending) return;
    if (message.t === "event") {
      try {
        pending.onEvent?.(message.event);
      } catch {
        // The caller's handler failing must not take the pool down; the outcome still arrives.
      }
      return;
    }
    thread.pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.t === "done") pending.resolve(message.outcome);
    else pending.reject(new LiveRuntimeError(message.code ?? (pending.kind === "open" ? "STARTUP_FAILED" : "RUNTIME_LOST"), message.message));
  }

  /** A thread is gone (exited, or terminated as hung): fail what waited on it, report the rest. */
  function lose(thread: Thread, reason: string): void {
    if (thread.dead) return;
    thread.dead = true;
    threads.splice(threads.indexOf(thread), 1);
    const reported = new Set<string>();
    for (const [, p] of thread.pending) {
      clearTimeout(p.timer);
      if (p.kind === "execute") {
        reported.add(p.sessionId);
        p.reject(new LiveRuntimeError("RUNTIME_LOST", reason));
      } else if (p.kind === "open") {
        reported.add(p.sessionId);
        p.reject(new LiveRuntimeError("STARTUP_FAILED", reason));
      } else p.resolve(undefined);
    }
    thread.pending.clear();
    const lost: string[] = [];
    for (const id of thread.sessions) {
      if (live.get(id)?.thread === thread) live.delete(id);
      busy.delete(id);
      if (!reported.has(id)) lost.push(id);
    }
    thread.sessions.clear();
    if (shuttingDown) return;
    if (lost.length > 0) options.onLost?.(lost, reason);
    start();
  }

  /** Terminates the thread when it stays silent past the request's time. */
  function watch(thread: Thread, p: Pending): void {
    p.timer = setTimeout(() => {
      thread.port.terminate();
      lose(thread, `the session's thread did not answer within ${p.timeoutMs} ms and was replaced`);
    }, p.timeoutMs);
  }

  function request(thread: Thread, message: ToThread & { id: number }, sessionId: string, timeoutMs: number, onEvent?: (e: LiveEvent) => void) {
    return new Promise<ExecutionOutcome | undefined>((resolve, reject) => {
      const pending: Pending = { kind: message.t, sessionId, resolve, reject, onEvent, timeoutMs };
      if (thread.ready) watch(thread, pending);
      thread.pending.set(message.id, pending);
      thread.port.post(message);
    });
  }

  function pick(): Thread {
    while (threads.length < size) start();
    return threads.reduce((a, b) => (b.sessions.size < a.sessions.size ? b : a));
  }

  const notLive = (sessionId: string) => new LiveRuntimeError("SESSION_NOT_LIVE", `session ${sessionId} is not live`);

  return {
    async open(spec) {
      if (shuttingDown) throw new LiveRuntimeError("STARTUP_FAILED", "the server is shutting down");
      if (threads.some((t) => t.sessions.has(spec.sessionId))) throw new LiveRuntimeError("STARTUP_FAILED", `session ${spec.sessionId} is already live`);
      const thread = pick();
      thread.sessions.add(spec.sessionId);
      // Each library and startup file may run up to wall_ms.
      const steps = spec.libraries.length + spec.startupFiles.length + 1;
      try {
        await request(thread, { t: "open", id: nextId++, spec }, spec.sessionId, steps * spec.settings.limits.wall_ms + graceMs);
        live.set(spec.sessionId, { thread, wallMs: spec.settings.limits.wall_ms });
      } catch (err) {
        thread.sessions.delete(spec.sessionId);
        throw err;
      }
    },

    async execute(sessionId, request_, onEvent) {
      const entry = live.get(sessionId);
      if (!entry) throw notLive(sessionId);
      if (busy.has(sessionId)) throw new LiveRuntimeError("SESSION_BUSY", `session ${sessionId} is already running an execution`);
      busy.add(sessionId);
      try {
        const outcome = await request(entry.thread, { t: "execute", id: nextId++, sessionId, request: request_ }, sessionId, entry.wallMs + graceMs, onEvent);
        return outcome!;
      } catch (err) {
        if (err instanceof LiveRuntimeError && err.code === "RUNTIME_LOST" && live.get(sessionId) === entry) {
          live.delete(sessionId);
          entry.thread.sessions.delete(sessionId);
        }
        throw err;
      } finally {
        busy.delete(sessionId);
      }
    },

    async close(sessionId) {
      const entry = live.get(sessionId);
      if (!entry) return;
      live.delete(sessionId);
      entry.thread.sessions.delete(sessionId);
      // Closing never fails: a thread that cannot answer is replaced by the watchdog anyway.
      if (!entry.thread.dead) await request(entry.thread, { t: "close", id: nextId++, sessionId }, sessionId, entry.wallMs + graceMs).catch(() => {});
    },

    liveIds: () => [...live.keys()],

    async shutdown() {
      shuttingDown = true;
      for (const thread of [...threads]) {
        thread.port.terminate();
        lose(thread, "the server is shutting down");
      }
      live.clear();
      busy.clear();
    },
  };
}
