/**
 * Where a route script's handlers run. `ScriptRuntime` is what the host needs: load a script
 * (every sandbox gets it; the registrations come back as data) and call one handler per request.
 *
 * - `inProcessScriptRuntime`: sandboxes on the serving thread (workerd, where an isolate is the
 *   unit of concurrency; `--threads 0` for debugging on Node and Deno).
 * - `threadScriptRuntime`: a pool of threads (lib/thread-pool.ts), each with one sandbox loaded
 *   with the script, so a handler that spins never blocks the host. A thread takes one request at
 *   a time; others wait in a queue for the next free thread. A replaced thread (hung, crashed)
 *   loads the current script before its first request.
 */
import { createThreadPool, ThreadCallError, type PoolMessage, type PoolReply, type PoolThread } from "../../../lib/thread-pool.ts";
import type { SpawnThread } from "../../../lib/threads.ts";
import type { SandboxEngine } from "../../../lib/sandbox/index.ts";
import { loadScriptSandbox, ScriptLoadError, type DispatchInput, type DispatchOutcome, type Registration, type ScriptBundle, type ScriptLimits, type ScriptNatives, type ScriptSandbox } from "./script-sandbox.ts";

export interface ScriptRuntime {
  /** Loads `bundle` (ScriptLoadError when it fails: the previous script stays). */
  load(bundle: ScriptBundle): Promise<Registration[]>;
  dispatch(handler: number, input: DispatchInput): Promise<DispatchOutcome>;
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
  const load = (bundle: ScriptBundle) => loadScriptSandbox(engine, bundle, options.natives, options.limits);

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
        const outcome = await slot.sandbox.dispatch(handler, input);
        if (slot.sandbox.broken) {
          slot.sandbox.dispose();
          slot.sandbox = undefined;
        }
        return outcome;
      } finally {
        pool.release(slot);
      }
    },
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

export type ScriptCall = { op: "load"; bundle: ScriptBundle } | { op: "dispatch"; handler: number; input: DispatchInput };
export type ScriptCallResult = Registration[] | DispatchOutcome;
export type ToScriptThread = PoolMessage<ScriptThreadInit, ScriptCall>;
export type FromScriptThread = PoolReply<ScriptCallResult, never>;
export type SpawnScriptThread = SpawnThread<ToScriptThread, FromScriptThread>;

export interface ThreadRuntimeOptions {
  natives: ScriptNatives;
  limits: ScriptLimits;
  /** Threads (default 2). */
  threads?: number;
  /** How long past the wall limit a silent thread is given before it is replaced (default 2000). */
  graceMs?: number;
  maxHeapMb?: number;
}

interface ThreadState {
  /** The script generation this thread has loaded (0: none). */
  loaded: number;
  busy: boolean;
}

export function threadScriptRuntime(spawn: SpawnScriptThread, options: ThreadRuntimeOptions): ScriptRuntime {
  const graceMs = options.graceMs ?? 2000;
  const init: ScriptThreadInit = { natives: options.natives, limits: options.limits, maxHeapMb: options.maxHeapMb ?? 512 };
  const callTimeout = options.limits.wallMs + graceMs;
  const pool = createThreadPool<ScriptThreadInit, ScriptCall, ScriptCallResult, never, ThreadState>(spawn, {
    size: options.threads ?? 2,
    init: () => init,
    newState: () => ({ loaded: 0, busy: false }),
    // A lost thread's waiter was rejected; the queue moves on to the replacement.
    onThreadLost: () => queueMicrotask(pump),
  });
  let current: ScriptBundle | undefined;
  let generation = 0;
  const waiting: ((thread: PoolThread<ThreadState>) => void)[] = [];

  /** Hands idle threads to waiting requests. */
  function pump(): void {
    while (waiting.length > 0) {
      const thread = pool.pick((a, b) => !a.state.busy && b.state.busy);
      if (thread.state.busy) return;
      thread.state.busy = true;
      waiting.shift()!(thread);
    }
  }
  function acquire(): Promise<PoolThread<ThreadState>> {
    return new Promise((resolve) => {
      waiting.push(resolve);
      pump();
    });
  }
  function release(thread: PoolThread<ThreadState>): void {
    thread.state.busy = false;
    pump();
  }

  async function loadOn(thread: PoolThread<ThreadState>, bundle: ScriptBundle, g: number): Promise<Registration[]> {
    const registrations = (await pool.call(thread, { op: "load", bundle }, callTimeout)) as Registration[];
    thread.state.loaded = g;
    return registrations;
  }

  return {
    async load(bundle) {
      const thread = await acquire();
      try {
        const registrations = await loadOn(thread, bundle, generation + 1);
        current = bundle;
        generation++;
        // The other threads load it now rather than on their first request (a cold start there
        // would cost that request the thread's engine and script load).
        for (const other of pool.threads()) {
          if (other === thread || other.state.busy) continue;
          other.state.busy = true;
          const g = generation;
          void loadOn(other, bundle, g)
            .catch(() => {}) // it loads again on its first request
            .finally(() => release(other));
        }
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
        return (await pool.call(thread, { op: "dispatch", handler, input }, callTimeout)) as DispatchOutcome;
      } catch (err) {
        if (!(err instanceof ThreadCallError)) throw err;
        return { ok: false, failure: err.lost ? "broken" : "error", message: err.message, console: [] };
      } finally {
        release(thread);
      }
    },
    async close() {
      pool.shutdown();
    },
  };
}
