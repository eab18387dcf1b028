/**
 * The thread side of `threadScriptRuntime` (runtime.ts), runtime-free: each thread loads its own
 * QuickJS engine and keeps one sandbox loaded with the current script. A sandbox that broke (out
 * of memory, native stack overflow) is replaced by a fresh one loaded with the same script.
 */
import { loadQuickJS, type SandboxEngine } from "../../../lib/sandbox/index.ts";
import { serveThreadCalls } from "../../../lib/thread-pool.ts";
import type { ThreadEndpoint } from "../../../lib/threads.ts";
import type { FromScriptThread, ScriptCall, ScriptCallResult, ScriptHostQuestion, ScriptThreadInit, ToScriptThread } from "./runtime.ts";
import { loadScriptSandbox, type ScriptBundle, type ScriptHostCalls, type ScriptSandbox } from "./script-sandbox.ts";

export function serveScriptThread(endpoint: ThreadEndpoint<ToScriptThread, FromScriptThread>): void {
  let engine: SandboxEngine;
  let init: ScriptThreadInit;
  let bundle: ScriptBundle | undefined;
  let sandbox: ScriptSandbox | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  // Calls run one at a time, so a host service call belongs to the call now running.
  let ask: ((question: unknown) => Promise<unknown>) | undefined;
  const hostCalls: ScriptHostCalls = async (module, fn, args) => {
    if (!ask) throw new Error("no handler is running");
    return (await ask({ module, fn, args } satisfies ScriptHostQuestion)) as Awaited<ReturnType<ScriptHostCalls>>;
  };
  const load = (b: ScriptBundle) => loadScriptSandbox(engine, b, init.natives, init.limits, hostCalls);
  serveThreadCalls(endpoint, {
    async init(message) {
      init = message;
      engine = await loadQuickJS({ maxHeapMb: init.maxHeapMb });
    },
    handle(call, _emit, askHost) {
      // One call at a time: the host may post the next before this one is answered.
      const turn = queue.then(async () => {
        ask = askHost;
        try {
          return await work(call);
        } finally {
          ask = undefined;
        }
      });
      queue = turn.catch(() => {});
      return turn;
    },
  });

  async function work(call: ScriptCall): Promise<ScriptCallResult> {
      if (call.op === "load") {
        const fresh = await load(call.bundle);
        sandbox?.dispose();
        sandbox = fresh;
        bundle = call.bundle;
        return fresh.registrations;
      }
      if (!sandbox || !bundle) throw new Error("no script is loaded");
      const outcome = await sandbox.dispatch(call.handler, call.input);
      if (sandbox.broken) {
        sandbox.dispose();
        sandbox = undefined;
        sandbox = await load(bundle);
      }
      return outcome;
  }
}
