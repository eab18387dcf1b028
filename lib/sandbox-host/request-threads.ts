/**
 * Requests over a pool of sandbox threads (pool.ts), for work where any thread will do (the route
 * host's handlers; the session service pins each session to one thread instead).
 *
 * The rule: nothing queues behind a long handler. An idle thread takes a request; a busy one takes
 * up to `depth` more (posted at once, so the thread goes from one to the next without waiting for
 * the main thread: the messages of one turn cross as one batch), but only while it keeps
 * answering. A thread stuck in a long handler gets nothing more to wait behind it: requests wait in
 * the host's queue for the first thread that is free.
 */
import { type AskHandler, createThreadPool, type PoolMessage, type PoolReply, type PoolThread, type ThreadPool } from "./pool.ts";
import type { SpawnThread } from "./threads.ts";

/** A busy thread that has not answered for this long takes no more queued requests. */
export const PIPELINE_STALL_MS = 10;

/** The scheduler's bookkeeping beside the owner's state `S`. */
export interface Load {
  /** Requests posted to it and not answered. */
  slots: number;
  /** When it last answered, or took work while idle (performance.now()). */
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
  const waiting: ((thread: RequestThread<S>) => void)[] = [];
  const pool: ThreadPool<Req, Res, never, S & Load> = createThreadPool(spawn, {
    size: options.threads,
    init: options.init,
    newState: () => ({ ...options.newState(), slots: 0, progressAt: 0 }),
    // A lost thread's waiters were rejected; the queue moves on to the replacement.
    onThreadLost: () => queueMicrotask(pump),
  });

  function takesMore(thread: RequestThread<S>): boolean {
    const s = thread.state;
    return s.slots === 0 || (s.slots < depth && performance.now() - s.progressAt < PIPELINE_STALL_MS);
  }
  function take(thread: RequestThread<S>): void {
    if (thread.state.slots++ === 0) thread.state.progressAt = performance.now();
  }
  /** Hands free threads to waiting requests. */
  function pump(): void {
    while (waiting.length > 0) {
      const thread = pool.pick((a, b) => a.state.slots < b.state.slots);
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
