/**
 * A pool of threads answering calls, runtime-free: threads are reached through `ThreadPort`s made
 * by a spawn adapter (lib/adapters/*-threads.ts), the thread side is `serveThreadCalls`. Used by
 * the session service (sessions pinned to threads) and the route host (script handlers).
 *
 * Why threads: a QuickJS sandbox runs synchronously, so it must not run on the thread that serves
 * HTTP. The pool owns what both apps need alike: spawning up to `size` threads, one `init`
 * message each, call ids, events streamed back while a call runs, and the watchdog. A thread that
 * exits, or stays silent past a call's `timeoutMs` once it is ready (hung in a native operation
 * nothing can interrupt), is terminated and replaced; its calls reject with `ThreadCallError`
 * (`lost: true`) and `onThreadLost` tells the owner, whose per-thread `state` says what lived there.
 * While a call runs, the thread may also ask the host a question (`ask`; the caller's `onAsk`
 * answers it), for work only the host can do, such as a query on its database.
 */
import type { SpawnThread, ThreadEndpoint, ThreadPort } from "./threads.ts";
import { decodeStrings, encodeStrings } from "./wire.ts";

/**
 * Messages posted in one turn of the event loop cross as one (`{t: "batch"}`, or one string:
 * wire.ts): a postMessage costs far more than the little a message carries
 * (bench/routes.bench.ts), and under load many requests are dispatched, and answered, in the same
 * turn. Order is kept.
 */
export type Batch<T> = { t: "batch"; messages: T[] } | string;

/** After this turn's I/O callbacks (Node's setImmediate; a zero timeout where there is none). */
const nextTurn = (fn: () => void): void => void (typeof setImmediate === "function" ? setImmediate(fn) : setTimeout(fn, 0));

/** An error as it crosses between threads: its message, and its `code` when that is a string. */
function failure(err: unknown): { message: string; code?: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return { message: err instanceof Error ? err.message : String(err), ...(typeof code === "string" ? { code } : {}) };
}

/**
 * Posts one message or a batch. A message the channel refuses (structured clone throws for a
 * function, or for a value nested too deep for its recursive copy: a RangeError) must not take
 * the process down: a refused batch is posted again message by message, and each message that
 * still cannot be sent goes to `unsent`, which fails what depended on it.
 */
function postEach<T extends { t: string }>(post: (message: T | Batch<T>) => void, messages: T[], unsent: (message: T, err: unknown) => void): void {
  try {
    post(encodeStrings(messages) ?? (messages.length === 1 ? messages[0]! : { t: "batch", messages }));
    return;
  } catch (err) {
    if (messages.length === 1) return unsent(messages[0]!, err);
  }
  for (const message of messages) {
    try {
      post(message);
    } catch (err) {
      unsent(message, err);
    }
  }
}

function batchingPost<T extends { t: string }>(post: (message: T | Batch<T>) => void, unsent: (message: T, err: unknown) => void): (message: T) => void {
  let outbox: T[] | undefined;
  return (message) => {
    if (outbox) {
      outbox.push(message);
      return;
    }
    outbox = [message];
    nextTurn(() => {
      const messages = outbox!;
      outbox = undefined;
      postEach(post, messages, unsent);
    });
  };
}

/** Why a message could not cross, for the error that replaces it. */
const notSent = (what: string, err: unknown) => `${what} could not be sent to the other thread: ${err instanceof Error ? err.message : String(err)}`;

/** The code of a call that failed because its request or result could not be copied across. */
export const MESSAGE_NOT_SENT = "MESSAGE_NOT_SENT";

function unbatching<T>(handle: (message: T) => void): (message: T | Batch<T>) => void {
  return (message) => {
    if (typeof message === "string") { for (const m of decodeStrings<T>(message)) handle(m); }
    else if ((message as { t: string }).t === "batch") { for (const m of (message as { messages: T[] }).messages) handle(m); }
    else handle(message as T);
  };
}

/**
 * The longest delay a timer can be armed with: Node, Deno and browsers keep it in a signed 32-bit
 * integer, and a longer one (or NaN) fires after 1 ms. A longer watchdog is clamped to it (24.8
 * days: no call runs that long); a negative or non-number delay fires at once.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function timerDelay(ms: number): number {
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_TIMER_MS) : ms > 0 ? MAX_TIMER_MS : 0;
}

export type PoolMessage<Init, Req> = OnePoolMessage<Init, Req> | Batch<OnePoolMessage<Init, Req>>;

type OnePoolMessage<Init, Req> =
  | { t: "init"; init: Init }
  | { t: "call"; id: number; req: Req }
  | { t: "answer"; ask: number; ok: true; value: unknown }
  | { t: "answer"; ask: number; ok: false; message: string; code?: string };

export type PoolReply<Res, Ev> = OnePoolReply<Res, Ev> | Batch<OnePoolReply<Res, Ev>>;

type OnePoolReply<Res, Ev> =
  | { t: "ready" }
  /** Calls are running and the thread is free (ServeThreadOptions.heartbeatMs). */
  | { t: "alive" }
  | { t: "event"; id: number; event: Ev }
  | { t: "ask"; id: number; ask: number; question: unknown }
  | { t: "done"; id: number; res: Res }
  | { t: "fail"; id: number; code?: string; message: string };

/** How the host answers a thread's question during a call (a rejection goes back as an error). */
export type AskHandler = (question: unknown) => Promise<unknown> | unknown;

/** A call that did not get an answer: the thread failed it (`code` from the thread), its request or
 * result could not be copied across (`code` MESSAGE_NOT_SENT; the thread is fine), or it was lost. */
export class ThreadCallError extends Error {
  readonly code: string | undefined;
  /** The thread exited, hung or the pool shut down; the call may not have run to its end. */
  readonly lost: boolean;
  constructor(message: string, options: { code?: string; lost: boolean }) {
    super(message);
    this.name = "ThreadCallError";
    this.code = options.code;
    this.lost = options.lost;
  }
}

export interface PoolThread<S> {
  /** The owner's bookkeeping for this thread (`newState()`). */
  readonly state: S;
  /** Calls posted and not yet answered. */
  readonly inFlight: number;
  readonly dead: boolean;
}

export interface ThreadPoolOptions<Init, S> {
  /** Threads in the pool (at least 1); a function lets the owner grow it later (read at each pick). */
  size: number | (() => number);
  /** The first message of every thread, made when it is spawned. */
  init: () => Init;
  newState: () => S;
  /** A thread is gone (after its calls were rejected), unless the pool is shutting down. */
  onThreadLost?: (thread: PoolThread<S>, reason: string) => void;
  /** The thread's heartbeat: its calls are waiting, none is running (ServeThreadOptions). */
  onAlive?: (thread: PoolThread<S>) => void;
}

export interface ThreadPool<Req, Res, Ev, S> {
  /** The thread `better` prefers among all (threads are started up to `size` first). */
  pick(better: (a: PoolThread<S>, b: PoolThread<S>) => boolean): PoolThread<S>;
  /** Posts a call; `timeoutMs` arms the watchdog once the thread is ready. */
  call(thread: PoolThread<S>, req: Req, timeoutMs: number, onEvent?: (event: Ev) => void, onAsk?: AskHandler): Promise<Res>;
  /** Live threads (possibly fewer than `size` before the first `pick`). */
  threads(): readonly PoolThread<S>[];
  shutdown(): void;
}

interface Pending<Res, Ev> {
  resolve: (res: Res) => void;
  reject: (err: Error) => void;
  onEvent?: (event: Ev) => void;
  onAsk?: AskHandler;
  timeoutMs: number;
  timer?: ReturnType<typeof setTimeout>;
}

interface Thread<Req, Res, Ev, S> extends PoolThread<S> {
  port: ThreadPort<PoolMessage<unknown, Req>, PoolReply<Res, Ev>>;
  /** Posts to the thread, batched per turn of the event loop. */
  send: (message: OnePoolMessage<unknown, Req>) => void;
  /** Loaded its engine: watchdogs run only from then on (a thread's startup takes ~1 s). */
  ready: boolean;
  pending: Map<number, Pending<Res, Ev>>;
  inFlight: number;
  dead: boolean;
}

export function createThreadPool<Init, Req, Res, Ev, S>(
  spawn: SpawnThread<PoolMessage<Init, Req>, PoolReply<Res, Ev>>,
  options: ThreadPoolOptions<Init, S>,
): ThreadPool<Req, Res, Ev, S> {
  const size = typeof options.size === "function" ? options.size : () => options.size as number;
  const threads: Thread<Req, Res, Ev, S>[] = [];
  let nextId = 1;
  let shuttingDown = false;

  function start(): Thread<Req, Res, Ev, S> {
    const port = spawn() as Thread<Req, Res, Ev, S>["port"];
    const send = batchingPost<OnePoolMessage<unknown, Req>>(
      (m) => void (!thread.dead && port.post(m)),
      (m, err) => unsent(thread, m, err),
    );
    const thread: Thread<Req, Res, Ev, S> = { port, send, ready: false, pending: new Map(), inFlight: 0, dead: false, state: options.newState() };
    port.listen(
      unbatching<OnePoolReply<Res, Ev>>((message) => onMessage(thread, message)),
      (reason) => lose(thread, `the thread exited: ${reason}`),
    );
    try {
      port.post({ t: "init", init: options.init() });
    } catch (err) {
      // Without its init the thread would never be ready: give it up, and let the caller fail.
      thread.dead = true;
      port.terminate();
      throw new ThreadCallError(notSent("the thread's init", err), { code: MESSAGE_NOT_SENT, lost: false });
    }
    threads.push(thread);
    return thread;
  }

  /** A message the channel refused: its call fails alone (the thread never saw it), or the thread's
   * question gets an error for an answer. */
  function unsent(thread: Thread<Req, Res, Ev, S>, message: OnePoolMessage<unknown, Req>, err: unknown): void {
    if (message.t === "call") {
      const pending = thread.pending.get(message.id);
      if (!pending) return;
      thread.pending.delete(message.id);
      thread.inFlight--;
      clearTimeout(pending.timer);
      pending.reject(new ThreadCallError(notSent("the call", err), { code: MESSAGE_NOT_SENT, lost: false }));
    } else if (message.t === "answer" && message.ok) {
      thread.send({ t: "answer", ask: message.ask, ok: false, message: notSent("the answer", err), code: MESSAGE_NOT_SENT });
    }
  }

  function onMessage(thread: Thread<Req, Res, Ev, S>, message: OnePoolReply<Res, Ev>): void {
    if (message.t === "ready") {
      thread.ready = true;
      for (const p of thread.pending.values()) watch(thread, p);
      return;
    }
    if (message.t === "alive") return options.onAlive?.(thread);
    const pending = thread.pending.get(message.id);
    if (!pending) return;
    if (message.t === "ask") {
      answer(thread, message.ask, pending.onAsk, message.question);
      return;
    }
    if (message.t === "event") {
      try {
        pending.onEvent?.(message.event);
      } catch {
        // The caller's handler failing must not take the pool down; the answer still arrives.
      }
      return;
    }
    thread.pending.delete(message.id);
    thread.inFlight--;
    clearTimeout(pending.timer);
    if (message.t === "done") pending.resolve(message.res);
    else pending.reject(new ThreadCallError(message.message, { code: message.code, lost: false }));
  }

  function answer(thread: Thread<Req, Res, Ev, S>, ask: number, onAsk: AskHandler | undefined, question: unknown): void {
    void (async () => {
      if (!onAsk) throw new Error("this call takes no questions");
      return onAsk(question);
    })().then(
      (value) => !thread.dead && thread.send({ t: "answer", ask, ok: true, value }),
      (err: unknown) => !thread.dead && thread.send({ t: "answer", ask, ok: false, ...failure(err) }),
    );
  }

  function lose(thread: Thread<Req, Res, Ev, S>, reason: string): void {
    if (thread.dead) return;
    thread.dead = true;
    threads.splice(threads.indexOf(thread), 1);
    for (const p of thread.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new ThreadCallError(reason, { lost: true }));
    }
    thread.pending.clear();
    thread.inFlight = 0;
    if (shuttingDown) return;
    options.onThreadLost?.(thread, reason);
    start();
  }

  function watch(thread: Thread<Req, Res, Ev, S>, p: Pending<Res, Ev>): void {
    p.timer = setTimeout(() => {
      thread.port.terminate();
      lose(thread, `the thread did not answer within ${p.timeoutMs} ms and was replaced`);
    }, timerDelay(p.timeoutMs));
  }

  return {
    pick(better) {
      while (threads.length < Math.max(1, size())) start();
      return threads.reduce((a, b) => (better(b, a) ? b : a));
    },
    call(t, req, timeoutMs, onEvent, onAsk) {
      const thread = t as Thread<Req, Res, Ev, S>;
      if (thread.dead || shuttingDown) {
        return Promise.reject(new ThreadCallError(shuttingDown ? "the pool is shutting down" : "the thread is gone", { lost: true }));
      }
      return new Promise<Res>((resolve, reject) => {
        const id = nextId++;
        const pending: Pending<Res, Ev> = { resolve, reject, onEvent, onAsk, timeoutMs };
        if (thread.ready) watch(thread, pending);
        thread.pending.set(id, pending);
        thread.inFlight++;
        thread.send({ t: "call", id, req });
      });
    },
    threads: () => threads,
    shutdown() {
      shuttingDown = true;
      for (const thread of [...threads]) {
        thread.port.terminate();
        lose(thread, "the pool is shutting down");
      }
    },
  };
}

/** The thread's side: `init` once (its answer is awaited before any call runs), then `handle` calls. */
export interface ThreadService<Init, Req, Res, Ev> {
  init(init: Init): Promise<void> | void;
  /** A thrown error with a string `code` is passed back with that code. `ask` puts a question to
   * the caller's `onAsk` while this call runs (it rejects with the host's message and code). */
  handle(req: Req, emit: (event: Ev) => void, ask: (question: unknown) => Promise<unknown>): Promise<Res>;
}

export interface ServeThreadOptions {
  /** While calls run, tell the host every this many ms that the thread is free (its calls wait on
   * a timer or a host call, none runs), unless it answered a call since: a timer fires only when
   * the thread is free, so a spinning call silences it (request-threads.ts reads the silence). */
  heartbeatMs?: number;
}

export function serveThreadCalls<Init, Req, Res, Ev>(
  endpoint: ThreadEndpoint<PoolMessage<Init, Req>, PoolReply<Res, Ev>>,
  service: ThreadService<Init, Req, Res, Ev>,
  options: ServeThreadOptions = {},
): void {
  let initialized: Promise<void> | undefined;
  /** `init` succeeded: calls need not wait for `initialized` (a turn of the microtask queue each). */
  let initDone = false;
  let nextAsk = 1;
  const asked = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  const post = batchingPost<OnePoolReply<Res, Ev>>(
    (m) => endpoint.post(m),
    (m, err) => {
      // A result or a question that cannot be copied fails its call or its question, never the thread.
      if (m.t === "done") {
        post({ t: "fail", id: m.id, code: MESSAGE_NOT_SENT, message: notSent("the result", err) });
      } else if (m.t === "ask") {
        asked.get(m.ask)?.reject(Object.assign(new Error(notSent("the question", err)), { code: MESSAGE_NOT_SENT }));
        asked.delete(m.ask);
      }
    },
  );
  /** Calls started and not answered; whether one was answered since the last heartbeat. */
  let running = 0;
  let answered = false;
  let heartbeat: ReturnType<typeof setTimeout> | undefined;
  const beat = () => {
    heartbeat = undefined;
    if (running === 0) return;
    if (!answered) post({ t: "alive" });
    answered = false;
    heartbeat = setTimeout(beat, options.heartbeatMs);
  };
  endpoint.listen(unbatching<OnePoolMessage<Init, Req>>((message) => {
    if (message.t === "answer") {
      const waiter = asked.get(message.ask);
      if (!waiter) return;
      asked.delete(message.ask);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(Object.assign(new Error(message.message), message.code ? { code: message.code } : {}));
      return;
    }
    if (message.t === "init") {
      initDone = false;
      const init = (initialized = Promise.resolve().then(() => service.init(message.init)));
      // Ready either way: a failed init fails each call with its message.
      void init.then(
        () => {
          if (initialized === init) initDone = true;
          endpoint.post({ t: "ready" });
        },
        () => endpoint.post({ t: "ready" }),
      );
      return;
    }
    void answer(message.id, message.req);
  }));

  async function answer(id: number, req: Req): Promise<void> {
    running++;
    if (options.heartbeatMs !== undefined && heartbeat === undefined) heartbeat = setTimeout(beat, options.heartbeatMs);
    try {
      if (!initDone) {
        if (!initialized) throw new Error("the thread was not initialised");
        await initialized;
      }
      const ask = (question: unknown) =>
        new Promise<unknown>((resolve, reject) => {
          const n = nextAsk++;
          asked.set(n, { resolve, reject });
          post({ t: "ask", id, ask: n, question });
        });
      // Events go at once: a sandbox that runs synchronously for a while would otherwise hold
      // its console lines until it ends.
      // An event that cannot be copied throws to the emitter, which fails its call.
      const emit = (event: Ev) => {
        try {
          endpoint.post({ t: "event", id, event });
        } catch (err) {
          throw Object.assign(new Error(notSent("an event", err)), { code: MESSAGE_NOT_SENT });
        }
      };
      const res = await service.handle(req, emit, ask);
      post({ t: "done", id, res });
    } catch (err) {
      post({ t: "fail", id, ...failure(err) });
    }
    running--;
    answered = true;
  }
}
