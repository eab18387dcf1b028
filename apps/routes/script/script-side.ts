/**
 * The route host's sandbox side (lib/sandbox-host), runtime-free: a few sandboxes loaded with the
 * current script (lib/sandbox-host/sandbox-set.ts), in process or on a thread, so a handler that
 * waits does not hold up the next request. A sandbox that broke (out of memory, native stack
 * overflow) is closed, and a fresh one loaded with the same script when a call needs it.
 *
 * Runs where the sandboxes live: on each request thread (`serveScriptThread`, the entry of
 * node-thread.ts and deno-thread.ts), or on the serving thread in process (`scriptSide` through
 * runtime.ts's `inProcessScriptRuntime`: workerd, `--threads 0`). The main thread of a threaded
 * host takes only this file's protocol types and SANDBOXES_PER_SIDE; how a call and its outcome
 * are written is script-wire.ts's.
 */
import {
  type AskHost,
  createSandboxSet,
  HEARTBEAT_MS,
  type PoolMessage,
  type PoolReply,
  type SandboxSide,
  type SandboxThreadInit,
  serveSandboxThread,
  type ThreadEndpoint,
} from "#lib/sandbox-host";
import type { HostValue, SandboxEngine } from "#lib/sandbox";
import { decodeDispatchCall, type DispatchOutcome, encodeOutcome } from "./script-wire.ts";
import {
  loadScriptSandbox,
  type Registration,
  type ScriptBundle,
  type ScriptHostCalls,
  type ScriptLimits,
  type ScriptNatives,
  type ScriptSandbox,
} from "./script-sandbox.ts";

// ---- protocol: what crosses ----------------------------------------------------------------------

export interface ScriptThreadInit extends SandboxThreadInit {
  natives: ScriptNatives;
  limits: ScriptLimits;
  /** Sandboxes the side may keep loaded with the script (default SANDBOXES_PER_SIDE). */
  sandboxes?: number;
}

/**
 * A dispatch crosses a thread as a string (script-wire.ts: `encodeDispatchCall`), and its outcome
 * comes back as `encodeOutcome` writes it. In process it stays an object.
 */
export type ScriptCall = { op: "load"; bundle: ScriptBundle } | { op: "dispatch"; handler: number; input: string } | string;
export type ScriptCallResult = Registration[] | DispatchOutcome | string;

export type ToScriptThread = PoolMessage<ScriptThreadInit, ScriptCall>;
export type FromScriptThread = PoolReply<ScriptCallResult, never>;

/** What a handler asks its host while it runs: a service function call. */
export interface ScriptHostQuestion {
  module: string;
  fn: string;
  args: HostValue[];
}

// ---- the side ------------------------------------------------------------------------------------

/** Sandboxes a side keeps loaded with the script (each waiting handler holds one; default). */
export const SANDBOXES_PER_SIDE = 8;

/** One of the side's sandboxes: the script generation it has, and the host channel of the call
 * running in it (a service call belongs to that call). */
interface Loaded {
  sandbox: ScriptSandbox;
  generation: number;
  channel: { ask?: AskHost };
}

/**
 * Calls run concurrently, one per sandbox: a handler that awaits (a timer, a service call) holds
 * its sandbox, and the next call takes another (opened with the same script while there are fewer
 * than `init.sandboxes`; the host already has the registrations of the first load). A load runs
 * alone: calls that come after it wait for it, and sandboxes with the previous script are closed
 * as their calls end.
 */
export function scriptSide(
  engine: SandboxEngine,
  init: ScriptThreadInit,
  options: { onThread?: boolean } = {},
): SandboxSide<ScriptCall, ScriptCallResult, never> {
  let bundle: ScriptBundle | undefined;
  let generation = 0;
  /** The load in progress; calls wait for it. */
  let loading: Promise<unknown> | undefined;

  async function open(b: ScriptBundle, g: number): Promise<Loaded> {
    const channel: Loaded["channel"] = {};
    const hostCalls: ScriptHostCalls = async (module, fn, args) => {
      if (!channel.ask) throw new Error("no handler is running");
      return (await channel.ask({ module, fn, args } satisfies ScriptHostQuestion)) as HostValue;
    };
    return { sandbox: await loadScriptSandbox(engine, b, init.natives, init.limits, hostCalls), generation: g, channel };
  }
  const sandboxes = createSandboxSet<Loaded>({
    open: () => {
      if (!bundle) return Promise.reject(new Error("no script is loaded"));
      return open(bundle, generation);
    },
    close: (loaded) => loaded.sandbox.dispose(),
    max: init.sandboxes ?? SANDBOXES_PER_SIDE,
    // On a thread calls come in batches: a call waits for a sandbox still finishing its handler.
    handOff: options.onThread,
  });

  async function load(b: ScriptBundle): Promise<Registration[]> {
    // A script that fails to load leaves the previous one in place.
    const fresh = await open(b, generation + 1);
    bundle = b;
    generation = fresh.generation;
    sandboxes.closeFree();
    sandboxes.add(fresh);
    return fresh.sandbox.registrations;
  }

  async function dispatch(call: ScriptCall, ask: AskHost): Promise<ScriptCallResult> {
    if (loading) await loading;
    const loaded = sandboxes.take() ?? (await sandboxes.acquire());
    loaded.channel.ask = ask;
    try {
      if (typeof call === "string") {
        const { handler, inputJson } = decodeDispatchCall(call);
        return encodeOutcome(await loaded.sandbox.dispatchText(handler, inputJson));
      }
      if (call.op !== "dispatch") throw new Error("not a dispatch");
      return await loaded.sandbox.dispatch(call.handler, call.input);
    } finally {
      loaded.channel.ask = undefined;
      // A broken sandbox (out of memory, native stack overflow) or one with a replaced script
      // goes; the next call that needs one opens a fresh one.
      if (loaded.sandbox.broken || loaded.generation !== generation) sandboxes.discard(loaded);
      else sandboxes.release(loaded);
    }
  }

  return {
    close() {
      // The ones in use are closed when their calls end (their generation is gone).
      bundle = undefined;
      generation++;
      sandboxes.closeFree();
    },
    handle(call, _emit, ask) {
      if (typeof call === "string" || call.op === "dispatch") return dispatch(call, ask);
      const previous = loading ?? Promise.resolve();
      const run = previous.then(() => load(call.bundle));
      const settled = run.then(() => {}, () => {});
      loading = settled;
      void settled.then(() => {
        if (loading === settled) loading = undefined;
      });
      return run;
    },
  };
}

/** A handler thread's entry (apps/routes/entries/*-thread.ts supply the endpoint). */
export function serveScriptThread(endpoint: ThreadEndpoint<ToScriptThread, FromScriptThread>): void {
  serveSandboxThread(endpoint, (engine, init) => scriptSide(engine, init, { onThread: true }), { heartbeatMs: HEARTBEAT_MS });
}
