/**
 * Where a route script's handlers run. `ScriptRuntime` is what the host needs: load a script
 * (every sandbox gets it; the registrations come back as data) and call one handler per request.
 *
 * - `inProcessScriptRuntime`: sandboxes on the serving thread (workerd, where an isolate is the
 *   unit of concurrency; `--threads 0` for debugging on Node and Deno).
 * - `threadScriptRuntime`: a pool of threads (lib/thread-pool.ts), each with one sandbox loaded
 *   with the script, so a handler that spins never blocks the host. Requests go to the least
 *   loaded thread; a thread that keeps answering may have a few queued (see `takesMore`), others
 *   wait in the host's queue. A replaced thread (hung, crashed) loads the current script before
 *   its first request.
 */
import { createThreadPool, ThreadCallError, type PoolMessage, type PoolReply, type PoolThread } from "../../../lib/thread-pool.ts";
import type { SpawnThread } from "../../../lib/threads.ts";
import type { HostValue, SandboxEngine } from "../../../lib/sandbox/index.ts";
import { loadScriptSandbox, ScriptLoadError, type DispatchInput, type DispatchOutcome, type Registration, type ScriptBundle, type ScriptHostCalls, type ScriptLimits, type ScriptNatives, type ScriptSandbox } from "./script-sandbox.ts";

export interface ScriptRuntime {
  /** Loads `bundle` (ScriptLoadError when it fails: the previous script stays). */
  load(bundle: ScriptBundle): Promise<Registration[]>;
  dispatch(handler: number, input: DispatchInput): Promise<DispatchOutcome>;
  /** Resolves when every sandbox has the current script (a thread may still be loading it after
   * `load` resolved: its first request would wait for that). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** Hands out free items, in FIFO order of the callers. */
function slots<T>() {
  const free: T[] = [];
  const waiting: ((item: T) => void)[] = [];
  return {
    release(item: T) {
      const next = waiting.shift();
      if (next) next(item);
      else free.push(item);
    },
    acquire(): Promise<T> {
      const item = free.pop();
      return item !== undefined ? Promise.resolve(item) : new Promise((resolve) => waiting.push(resolve));
    },
    drain(): T[] {
      return free.splice(0);
    },
  };
}

export interface InProcessOptions {
  natives: ScriptNatives;
  /** The host's service functions (`natives.services`). */
  hostCalls?: ScriptHostCalls;
  limits: ScriptLimits;
  /** Sandboxes loaded with the script: requests beyond this many wait (default 1). */
  sandboxes?: number;
}

export function inProcessScriptRuntime(engine: SandboxEngine, options: InProcessOptions): ScriptRuntime {
  let current: ScriptBundle | undefined;
  let generation = 0;
  /** Fixed slots; a slot's sandbox is (re)loaded on first use after a reload or a breakage. */
  const pool = slots<{ sandbox?: ScriptSandbox; generation: number }>();
  for (let i = 0; i < Math.max(1, options.sandboxes ?? 1); i++) pool.release({ generation: 0 });
  const load = (bundle: ScriptBundle) => loadScriptSandbox(engine, bundle, options.natives, options.limits, options.hostCalls);

  return {
    async load(bundle) {
      const fresh = await load(bundle);
      current = bundle;
      generation++;
      const free = pool.drain();
      if (free[0]) {
        free[0].sandbox?.dispose();
        Object.assign(free[0], { sandbox: fresh, generation });
      } else fresh.dispose();
      for (const slot of free) pool.release(slot);
      return fresh.registrations;
    },
    async dispatch(handler, input) {
      const slot = await pool.acquire();
      try {
        if (!slot.sandbox || slot.generation !== generation) {
          slot.sandbox?.dispose();
          slot.sandbox = undefined;
          if (!current) throw new Error("no script is loaded");
          const g = generation;
          slot.sandbox = await load(current);
          slot.generation = g;
        }
        const outcome = await slot.sandbox.dispatch(handler, JSON.stringify(input));
        if (slot.sandbox.broken) {
          slot.sandbox.dispose();
          slot.sandbox = undefined;
        }
        return outcome;
      } finally {
        pool.release(slot);
      }
    },
    ready: async () => {},
    async close() {
      for (const slot of pool.drain()) slot.sandbox?.dispose();
    },
  };
}

// ---- threads -------------------------------------------------------------------------------------

export interface ScriptThreadInit {
  natives: ScriptNatives;
  limits: ScriptLimits;
  /** Hard cap of the thread's QuickJS heap, MiB. */
  maxHeapMb: number;
}

export type ScriptCall = { op: "load"; bundle: ScriptBundle } | { op: "dispatch"; handler: number; input: string };
export type ScriptCallResult = Registration[] | DispatchOutcome;
export type ToScriptThread = PoolMessage<ScriptThreadInit, ScriptCall>;
export type FromScriptThread = PoolReply<ScriptCallResult, never>;
/** What a thread asks its host while a handler runs: a service function call. */
export interface ScriptHostQuestion {
  module: string;
  fn: string;
  args: HostValue[];
}
export type SpawnScriptThread = SpawnThread<ToScriptThread, FromScriptThread>;

/** A busy thread that has not answered for this long takes no more queued requests. */
const PIPELINE_STALL_MS = 10;

export interface ThreadRuntimeOptions {
  natives: ScriptNatives;
  /** The host's service functions (`natives.services`), called on the threads' behalf. */
  hostCalls?: ScriptHostCalls;
  limits: ScriptLimits;
  /** Threads (default 2). */
  threads?: number;
  /** How long past the wall limit a silent thread is given before it is replaced (default 2000). */
  graceMs?: number;
  /** Requests a busy thread may have queued (default 4; 1: only idle threads take requests). */
  pipeline?: number;
  maxHeapMb?: number;
}

interface ThreadState {
  /** The script generation this thread has loaded (0: none). */
  loaded: number;
  /** Requests posted to it and not answered. */
  slots: number;
  /** When it last answered, or took work while idle (performance.now()). */
  progressAt: number;
}

export function threadScriptRuntime(spawn: SpawnScriptThread, options: ThreadRuntimeOptions): ScriptRuntime {
  const graceMs = options.graceMs ?? 2000;
  const init: ScriptThreadInit = { natives: options.natives, limits: options.limits, maxHeapMb: options.maxHeapMb ?? 512 };
  const callTimeout = options.limits.wallMs + graceMs;
  const depth = Math.max(1, options.pipeline ?? 4);
  // One thread until the first script has loaded: at a cold start the others would only compete
  // with it for the CPU (bench/routes.bench.ts, cold start); then the rest start and load it.
  let loadedOnce = false;
  const pool = createThreadPool<ScriptThreadInit, ScriptCall, ScriptCallResult, never, ThreadState>(spawn, {
    size: () => (loadedOnce ? (options.threads ?? 2) : 1),
    init: () => init,
    newState: () => ({ loaded: 0, slots: 0, progressAt: 0 }),
    // A lost thread's waiter was rejected; the queue moves on to the replacement.
    onThreadLost: () => queueMicrotask(pump),
  });
  let current: ScriptBundle | undefined;
  let generation = 0;
  const waiting: ((thread: PoolThread<ThreadState>) => void)[] = [];
  let warming: Promise<void> = Promise.resolve();
  // The first thread boots (engine, ~100 ms) while the host reads its configuration and script.
  pool.pick(() => false);

  /** Hands idle threads to waiting requests. */
  function pump(): void {
    while (waiting.length > 0) {
      const thread = pool.pick((a, b) => a.state.slots < b.state.slots);
      if (!takesMore(thread)) return;
      if (thread.state.slots++ === 0) thread.state.progressAt = performance.now();
      waiting.shift()!(thread);
    }
  }
  function acquire(): Promise<PoolThread<ThreadState>> {
    return new Promise((resolve) => {
      waiting.push(resolve);
      pump();
    });
  }
  /**
   * An idle thread takes a request; a busy one takes up to `depth` (posted at once, so the thread
   * goes from one to the next without waiting for the main thread), but only while it keeps
   * answering: a thread stuck in a long handler gets nothing more to wait behind it.
   */
  function takesMore(thread: PoolThread<ThreadState>): boolean {
    const s = thread.state;
    return s.slots === 0 || (s.slots < depth && performance.now() - s.progressAt < PIPELINE_STALL_MS);
  }
  function release(thread: PoolThread<ThreadState>): void {
    thread.state.slots--;
    thread.state.progressAt = performance.now();
    pump();
  }

  async function loadOn(thread: PoolThread<ThreadState>, bundle: ScriptBundle, g: number): Promise<Registration[]> {
    const registrations = (await pool.call(thread, { op: "load", bundle }, callTimeout)) as Registration[];
    thread.state.loaded = g;
    return registrations;
  }

  // The host's hostCalls refuses a module or function it does not have.
  const answerHostCall = (question: unknown) => {
    const q = question as ScriptHostQuestion;
    if (!options.hostCalls) throw new Error(`${q.module}.${q.fn}: this host has no services`);
    return options.hostCalls(q.module, q.fn, q.args);
  };

  return {
    async load(bundle) {
      const thread = await acquire();
      try {
        const registrations = await loadOn(thread, bundle, generation + 1);
        current = bundle;
        generation++;
        loadedOnce = true;
        pool.pick(() => false); // starts the other threads
        // The other threads load it now rather than on their first request (a cold start there
        // would cost that request the thread's engine and script load).
        const others: Promise<unknown>[] = [];
        for (const other of pool.threads()) {
          if (other === thread || other.state.slots > 0) continue;
          other.state.slots++;
          const g = generation;
          others.push(
            loadOn(other, bundle, g)
              .catch(() => {}) // it loads again on its first request
              .finally(() => release(other)),
          );
        }
        warming = Promise.all(others).then(() => {});
        return registrations;
      } catch (err) {
        if (err instanceof ThreadCallError && err.code === "SCRIPT_LOAD_FAILED") throw new ScriptLoadError(err.message);
        throw err;
      } finally {
        release(thread);
      }
    },
    async dispatch(handler, input) {
      const thread = await acquire();
      try {
        if (thread.state.loaded !== generation && current) await loadOn(thread, current, generation);
        return (await pool.call(thread, { op: "dispatch", handler, input: JSON.stringify(input) }, callTimeout * thread.state.slots, undefined, answerHostCall)) as DispatchOutcome;
      } catch (err) {
        if (!(err instanceof ThreadCallError)) throw err;
        return { ok: false, failure: err.lost ? "broken" : "error", message: err.message, console: [] };
      } finally {
        release(thread);
      }
    },
    ready: () => warming,
    async close() {
      pool.shutdown();
    },
  };
}
