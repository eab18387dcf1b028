/**
 * The route host's sandbox side (lib/sandbox-host), runtime-free: one sandbox loaded with the
 * current script, in process or on a thread. A sandbox that broke (out of memory, native stack
 * overflow) is replaced by a fresh one loaded with the same script.
 */
import {
  type AskHost,
  type PoolMessage,
  type PoolReply,
  type SandboxSide,
  type SandboxThreadInit,
  serveSandboxThread,
  type ThreadEndpoint,
} from "#lib/sandbox-host";
import type { HostValue, SandboxEngine } from "#lib/sandbox";
import {
  answerResponse,
  type DispatchOutcome,
  isAnswerText,
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
}

/**
 * A dispatch crosses as a string, `<handler> <input JSON>`, and its outcome comes back as JSON
 * text when it is plain data (no bytes, nothing for the renderer): strings cross the thread channel
 * several times cheaper than objects (lib/sandbox-host/wire.ts). In process it stays an object.
 */
export type ScriptCall = { op: "load"; bundle: ScriptBundle } | { op: "dispatch"; handler: number; input: string } | string;
export type ScriptCallResult = Registration[] | DispatchOutcome | string;

export const dispatchCall = (handler: number, input: string): string => `${handler} ${input}`;

/** An outcome as text: the dispatcher's own short answer as it is, else JSON when JSON keeps all of it. */
function outcomeText(outcome: DispatchOutcome | string): DispatchOutcome | string {
  if (typeof outcome === "string") return outcome;
  return outcome.ok && (outcome.response.bytes !== undefined || outcome.response.render !== undefined) ? outcome : JSON.stringify(outcome);
}

/** An outcome as it came back from a side. */
export function outcomeOf(result: ScriptCallResult): DispatchOutcome {
  if (typeof result !== "string") return result as DispatchOutcome;
  return isAnswerText(result) ? { ok: true, response: answerResponse(result), console: [] } : (JSON.parse(result) as DispatchOutcome);
}
export type ToScriptThread = PoolMessage<ScriptThreadInit, ScriptCall>;
export type FromScriptThread = PoolReply<ScriptCallResult, never>;

/** What a handler asks its host while it runs: a service function call. */
export interface ScriptHostQuestion {
  module: string;
  fn: string;
  args: HostValue[];
}

// ---- the side ------------------------------------------------------------------------------------

/** Runs one call at a time (its owner makes sure: a slot in process, `oneAtATime` on a thread), so
 * a service call belongs to the call now running. */
export function scriptSide(engine: SandboxEngine, init: ScriptThreadInit): SandboxSide<ScriptCall, ScriptCallResult, never> {
  let bundle: ScriptBundle | undefined;
  let sandbox: ScriptSandbox | undefined;
  let ask: AskHost | undefined;
  const hostCalls: ScriptHostCalls = async (module, fn, args) => {
    if (!ask) throw new Error("no handler is running");
    return (await ask({ module, fn, args } satisfies ScriptHostQuestion)) as HostValue;
  };
  const load = (b: ScriptBundle) => loadScriptSandbox(engine, b, init.natives, init.limits, hostCalls);

  async function work(call: ScriptCall): Promise<ScriptCallResult> {
    if (typeof call === "string") {
      const space = call.indexOf(" ");
      return outcomeText(await dispatch(Number(call.slice(0, space)), call.slice(space + 1), true));
    }
    if (call.op === "dispatch") return dispatch(call.handler, call.input);
    // A script that fails to load leaves the previous one in place.
    const fresh = await load(call.bundle);
    sandbox?.dispose();
    sandbox = fresh;
    bundle = call.bundle;
    return fresh.registrations;
  }

  async function dispatch(handler: number, input: string, asText = false): Promise<DispatchOutcome | string> {
    if (!sandbox || !bundle) throw new Error("no script is loaded");
    const outcome = asText ? await sandbox.dispatchText(handler, input) : await sandbox.dispatch(handler, input);
    if (sandbox.broken) {
      sandbox.dispose();
      sandbox = undefined;
      sandbox = await load(bundle);
    }
    return outcome;
  }

  return {
    close() {
      sandbox?.dispose();
      sandbox = undefined;
    },
    async handle(call, _emit, askHost) {
      ask = askHost;
      try {
        return await work(call);
      } finally {
        ask = undefined;
      }
    },
  };
}

/** A handler thread's entry (apps/routes/entries/*-thread.ts supply the endpoint). */
export function serveScriptThread(endpoint: ThreadEndpoint<ToScriptThread, FromScriptThread>): void {
  serveSandboxThread(endpoint, scriptSide, { oneAtATime: true });
}
