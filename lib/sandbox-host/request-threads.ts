/**
 * Requests over a pool of sandbox threads (pool.ts), for work where any thread will do (the route
 * host's handlers; the session service pins each session to one thread instead).
 *
 * The rule: nothing queues behind a long handler. An idle thread takes a request; a busy one takes
 * up to `depth` more (posted at once, so the thread goes from one to the next without waiting for
 * the main thread: the messages of one turn cross as one batch), but only while it keeps
 * answering. A thread stuck in a long handler gets nothing more to wait behind it: requests wait in
 * the host's queue for the first thread that is free.
 *
 * A thread may run several calls at once (`sandboxes`: a handler that waits on a timer or a host
 * call holds a sandbox, not the thread). Its heartbeat (ServeThreadOptions.heartbeatMs, every
 * HEARTBEAT_MS while its calls only wait) counts as answering, so it keeps taking requests, up to
 * a sandbox each plus the queue; a spinning handler silences the heartbeat, and requests go to
 * the other threads.
 */
import { type AskHandler, createThreadPool, type PoolMessage, type PoolReply, type PoolThread, type ThreadPool } from "./pool.ts";
import type { SpawnThread } from "./threads.ts";

/** A busy thread that has not answered for this long takes no more queued requests. */
export const PIPELINE_STALL_MS = 10;

/** How often a thread whose calls only wait says so (well inside PIPELINE_STALL_MS). */
export const HEARTBEAT_MS = PIPELINE_STALL_MS / 2;

/** The scheduler's bookkeeping beside the owner's state `S`. */
export interface Load {
  /** Requests posted to it and not answered. */
  slots: number;
  /** When it last answered, sent its heartbeat, or took work while idle (performance.now()). */
  progressAt: number;
}

export type RequestThread<S> = PoolThread<S & Load>;

export interface RequestThreadsOptions<Init, S> {
  /** Threads; a function lets the owner grow the pool later (read whenever a thread is picked). */
  threads: number | (() => number);
  init: () => Init;
  newState: () => S;
  /** Requests a busy thread may have queued (default 4; 1: only idle threads take requests). */
  depth?: number;
  /** Calls a thread runs at once (its sandboxes; default 1): a thread that keeps answering takes
   * up to `sandboxes + depth - 1`. */
  sandboxes?: number;
}

export interface RequestThreads<Req, Res, S> {
  /** The first thread free to take a request (FIFO among callers); `release` it when answered. */
  acquire(): Promise<RequestThread<S>>;
  release(thread: RequestThread<S>): void;
  /** Takes `thread` for a call of the owner's own, if it is idle (false: it is busy). */
  claimIdle(thread: RequestThread<S>): boolean;
  call(thread: RequestThread<S>, req: Req, timeoutMs: number, onAsk?: AskHandler): Promise<Res>;
  /** Starts threads up to the pool's size (a cold start boots them before the first request). */
  startAll(): void;
  threads(): readonly RequestThread<S>[];
  shutdown(): void;
}

export function createRequestThreads<Init, Req, Res, S>(
  spawn: SpawnThread<PoolMessage<Init, Req>, PoolReply<Res, never>>,
  options: RequestThreadsOptions<Init, S>,
): RequestThreads<Req, Res, S> {
  const depth = Math.max(1, options.depth ?? 4);
  const capacity = Math.max(1, options.sandboxes ?? 1) + depth - 1;
  const waiting: ((thread: RequestThread<S>) => void)[] = [];
  const pool: ThreadPool<Req, Res, never, S & Load> = createThreadPool(spawn, {
    size: options.threads,
    init: options.init,
    newState: () => ({ ...options.newState(), slots: 0, progressAt: 0 }),
    // A lost thread's waiters were rejected; the queue moves on to the replacement.
    onThreadLost: () => queueMicrotask(pump),
    onAlive(thread) {
      thread.state.progressAt = performance.now();
      pump();
    },
  });

  function takesMore(thread: RequestThread<S>): boolean {
    const s = thread.state;
    return s.slots === 0 || (s.slots < capacity && performance.now() - s.progressAt < PIPELINE_STALL_MS);
  }
  function take(thread: RequestThread<S>): void {
    if (thread.state.slots++ === 0) thread.state.progressAt = performance.now();
  }
  /** Hands free threads to waiting requests. */
  function pump(): void {
    while (waiting.length > 0) {
      // One that takes more first (a thread stuck in a handler may have the fewest), then the least loaded.
      const thread = pool.pick((a, b) => {
        const ta = takesMore(a);
        return ta !== takesMore(b) ? ta : a.state.slots < b.state.slots;
      });
      if (!takesMore(thread)) return;
      take(thread);
      waiting.shift()!(thread);
    }
  }

  return {
    acquire: () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        pump();
      }),
    release(thread) {
      thread.state.slots--;
      thread.state.progressAt = performance.now();
      pump();
    },
    claimIdle(thread) {
      if (thread.state.slots > 0) return false;
      take(thread);
      return true;
    },
    call: (thread, req, timeoutMs, onAsk) => pool.call(thread, req, timeoutMs, undefined, onAsk),
    startAll: () => void pool.pick(() => false),
    threads: () => pool.threads(),
    shutdown: () => pool.shutdown(),
  };
}
