/**
 * Where a route script's handlers run. `ScriptRuntime` is what the host needs: load a script
 * (every sandbox gets it; the registrations come back as data) and call one handler per request.
 * This file runs on the main thread (the one serving HTTP); calls and outcomes cross to the
 * threads as script-wire.ts writes them. Both runtimes run the same sandbox side (script-side.ts)
 * on the shared sandbox-host layer:
 *
 * - `inProcessScriptRuntime`: one side on the serving thread (workerd, where an isolate is the unit
 *   of concurrency; `--threads 0` for debugging on Node and Deno).
 * - `threadScriptRuntime`: a pool of threads, each with a side, so a handler that spins never
 *   blocks the host; nothing queues behind a long handler (lib/sandbox-host/request-threads.ts).
 *   A replaced thread (hung, crashed) loads the current script before its first request.
 *
 * Each side keeps up to `sandboxes` sandboxes loaded with the script (script-side.ts), so handlers
 * that wait on a timer or a service call do not hold up the requests behind them.
 */
import { createRequestThreads, type RequestThread, type SpawnThread, ThreadCallError } from "#lib/sandbox-host";
import type { SandboxEngine } from "#lib/sandbox";
import {
  type FromScriptThread,
  SANDBOXES_PER_SIDE,
  type ScriptCall,
  type ScriptCallResult,
  type ScriptHostQuestion,
  scriptSide,
  type ScriptThreadInit,
  type ToScriptThread,
} from "./script-side.ts";
import { decodeOutcome, type DispatchOutcome, encodeDispatchCall } from "./script-wire.ts";
import {
  type DispatchInput,
  type Registration,
  type ScriptBundle,
  type ScriptHostCalls,
  type ScriptLimits,
  ScriptLoadError,
  type ScriptNatives,
} from "./script-sandbox.ts";

export interface ScriptRuntime {
  /** Loads `bundle` (ScriptLoadError when it fails: the previous script stays). */
  load(bundle: ScriptBundle): Promise<Registration[]>;
  dispatch(handler: number, input: DispatchInput): Promise<DispatchOutcome>;
  /** Resolves when every sandbox has the current script (a thread may still be loading it after
   * `load` resolved: its first request would wait for that). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export type SpawnScriptThread = SpawnThread<ToScriptThread, FromScriptThread>;

/** The host's answer to a handler's service call (its hostCalls refuses what it does not have). */
function hostAnswer(hostCalls: ScriptHostCalls | undefined) {
  return (question: unknown) => {
    const q = question as ScriptHostQuestion;
    if (!hostCalls) throw new Error(`${q.module}.${q.fn}: this host has no services`);
    return hostCalls(q.module, q.fn, q.args);
  };
}

/** The script each side should have: a generation number per successful load. */
function scriptGenerations() {
  let current: ScriptBundle | undefined;
  let generation = 0;
  return {
    get generation() {
      return generation;
    },
    /** The load call for a side that has `loaded` but not the current script, if any. */
    stale: (loaded: number): ScriptCall | undefined => (loaded !== generation && current ? { op: "load", bundle: current } : undefined),
    loaded(bundle: ScriptBundle): number {
      current = bundle;
      return ++generation;
    },
  };
}

const noEvents = () => {};

interface InProcessOptions {
  natives: ScriptNatives;
  /** The host's service functions (`natives.services`). */
  hostCalls?: ScriptHostCalls;
  limits: ScriptLimits;
  /** Sandboxes loaded with the script, opened as concurrent requests need them: requests beyond
   * this many wait (default SANDBOXES_PER_SIDE). */
  sandboxes?: number;
}

export function inProcessScriptRuntime(engine: SandboxEngine, options: InProcessOptions): ScriptRuntime {
  const ask = hostAnswer(options.hostCalls);
  const side = scriptSide(engine, { natives: options.natives, limits: options.limits, maxHeapMb: 0, sandboxes: options.sandboxes });
  return {
    load: async (bundle) => (await side.handle({ op: "load", bundle }, noEvents, ask)) as Registration[],
    dispatch: async (handler, input) => (await side.handle({ op: "dispatch", handler, input: JSON.stringify(input) }, noEvents, ask)) as DispatchOutcome,
    ready: async () => {},
    async close() {
      side.close?.();
    },
  };
}

interface ThreadRuntimeOptions {
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
  /** Sandboxes each thread keeps loaded with the script, for handlers that wait (default
   * SANDBOXES_PER_SIDE). */
  sandboxes?: number;
  maxHeapMb?: number;
}

export function threadScriptRuntime(spawn: SpawnScriptThread, options: ThreadRuntimeOptions): ScriptRuntime {
  const graceMs = options.graceMs ?? 2000;
  const sandboxes = options.sandboxes ?? SANDBOXES_PER_SIDE;
  const init: ScriptThreadInit = { natives: options.natives, limits: options.limits, maxHeapMb: options.maxHeapMb ?? 512, sandboxes };
  const callTimeout = options.limits.wallMs + graceMs;
  const ask = hostAnswer(options.hostCalls);
  const script = scriptGenerations();
  // One thread until the first script has loaded: at a cold start the others would only compete
  // with it for the CPU (bench/routes.bench.ts, cold start); then the rest start and load it.
  let loadedOnce = false;
  const threads = createRequestThreads<ScriptThreadInit, ScriptCall, ScriptCallResult, { loaded: number }>(spawn, {
    threads: () => (loadedOnce ? (options.threads ?? 2) : 1),
    init: () => init,
    newState: () => ({ loaded: 0 }),
    depth: options.pipeline,
    sandboxes,
  });
  let warming: Promise<void> = Promise.resolve();
  // The first thread boots (engine, ~100 ms) while the host reads its configuration and script.
  threads.startAll();

  async function loadOn(thread: RequestThread<{ loaded: number }>, call: ScriptCall, g: number): Promise<Registration[]> {
    const registrations = (await threads.call(thread, call, callTimeout)) as Registration[];
    thread.state.loaded = g;
    return registrations;
  }

  return {
    async load(bundle) {
      const thread = await threads.acquire();
      try {
        const registrations = await loadOn(thread, { op: "load", bundle }, script.generation + 1);
        const g = script.loaded(bundle);
        loadedOnce = true;
        threads.startAll();
        // The other threads load it now rather than on their first request (a cold start there
        // would cost that request the thread's engine and script load).
        const others: Promise<unknown>[] = [];
        for (const other of threads.threads()) {
          if (other === thread || !threads.claimIdle(other)) continue;
          others.push(
            loadOn(other, { op: "load", bundle }, g)
              .catch(() => {}) // it loads again on its first request
              .finally(() => threads.release(other)),
          );
        }
        warming = Promise.all(others).then(() => {});
        return registrations;
      } catch (err) {
        if (err instanceof ThreadCallError && err.code === "SCRIPT_LOAD_FAILED") throw new ScriptLoadError(err.message);
        throw err;
      } finally {
        threads.release(thread);
      }
    },
    async dispatch(handler, input) {
      const thread = await threads.acquire();
      try {
        const reload = script.stale(thread.state.loaded);
        if (reload) await loadOn(thread, reload, script.generation);
        const sent = await threads.call(thread, encodeDispatchCall(handler, JSON.stringify(input)), callTimeout * thread.state.slots, ask);
        return decodeOutcome(sent as DispatchOutcome | string);
      } catch (err) {
        if (!(err instanceof ThreadCallError)) throw err;
        return { ok: false, failure: err.lost ? "broken" : "error", message: err.message, console: [] };
      } finally {
        threads.release(thread);
      }
    },
    ready: () => warming,
    async close() {
      threads.shutdown();
    },
  };
}
