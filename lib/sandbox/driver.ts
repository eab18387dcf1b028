/**
 * The run driver. An evaluation is a series of synchronous slices inside QuickJS (evaluate, drain
 * promise jobs, deliver settled host promises) separated by waits for host promises. Limits are
 * enforced while the slices run (interrupt handler, counting bridges) and on the waits (wall
 * deadline). The driver also owns the sandbox's state: one evaluation at a time, and "broken"
 * once QuickJS threw a host exception.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, VmCallResult } from "quickjs-emscripten-core";
import type { SandboxHelpers } from "./bootstrap.ts";
import type { DirectCalls } from "./direct.ts";
import { SandboxBrokenError, SandboxBusyError, SandboxDisposedError, SandboxError } from "./errors.ts";
import type { HostCalls } from "./host-calls.ts";
import type { Budget, SandboxLimits } from "./limits.ts";
import type { SourceLoader } from "./loader.ts";
import type { HostValue, Marshal } from "./marshal.ts";
import type { Outcomes } from "./outcome.ts";
import type { SandboxTimers } from "./timers.ts";
import { HandleScope, withScope } from "./scope.ts";
import { MAX_NESTING, mayUseAwait, nestingDepth } from "./source.ts";
import type { CallTextResult, EvaluateOptions, EvaluateResult, Run } from "./types.ts";

/** JS_EVAL_FLAG_ASYNC: top-level await in a global script; the result is a promise of {value}. */
const EVAL_FLAG_ASYNC = 1 << 7;
const EVAL_FLAG_STRICT = 8;
const EVAL_TYPE_MODULE = 1;
const NO_EVENTS = (): void => {};

type State = "idle" | "running" | "disposed" | "broken";

interface DriverParts {
  ctx: QuickJSContext;
  rt: QuickJSRuntime;
  budget: Budget;
  limits: SandboxLimits;
  strict: boolean;
  marshal: Marshal;
  helpers: SandboxHelpers;
  hostCalls: HostCalls;
  loader: SourceLoader;
  outcomes: Outcomes;
  direct: DirectCalls;
  timers: SandboxTimers;
  /** Called after each evaluation is released (a dispose asked for during it happens then). */
  released(): void;
}

export class RunDriver {
  state: State = "idle";
  brokenReason = "";
  /** The evaluation in progress. */
  run: Run | undefined;
  /** QuickJS is on the stack (a host function is running): disposing must wait. */
  inSlice = false;
  /** Reused by `startCall` (the route host's per-request path): calls cannot nest. */
  private readonly callScope = new HandleScope();
  /** Global functions that can never change, by name (owned), and names looked up that were not
   * (until globals may have changed): see `fixedFunction`. */
  private readonly fixed = new Map<string, QuickJSHandle>();
  private readonly unfixed = new Set<string>();

  constructor(private readonly parts: DriverParts) {}

  assertUsable(): void {
    if (this.state === "disposed") throw new SandboxDisposedError();
    if (this.state === "broken") throw new SandboxBrokenError(this.brokenReason);
  }

  /** Starts an evaluation: checks the state, runs the bootstrap if needed, arms the budget. */
  begin(mode: Run["mode"], options: EvaluateOptions): void {
    this.assertUsable();
    if (this.state === "running") throw new SandboxBusyError();
    const { helpers, limits: l, budget } = this.parts;
    if (!helpers.booted) {
      try {
        helpers.boot();
      } catch (err) {
        // Out of engine heap, in practice: the sandbox was never usable.
        this.state = "broken";
        this.brokenReason = `its bootstrap failed: ${err instanceof Error ? err.message : String(err)}`;
        throw new SandboxBrokenError(this.brokenReason);
      }
    }
    this.parts.timers.install();
    this.state = "running";
    if (mode !== "call") this.unfixed.clear();
    const filename = options.filename ?? (mode === "repl" ? "<repl>" : mode === "call" ? "<call>" : "<script>");
    this.run = {
      mode,
      filename,
      sources: options.sources,
      onEvent: options.onEvent ?? NO_EVENTS,
      wrapped: false,
      asText: false,
      waitTimers: mode !== "call" && options.timers !== "clear",
    };
    const o = options.limits;
    budget.begin(
      o
        ? {
          cpuMs: o.cpuMs ?? l.cpuMs,
          wallMs: o.wallMs ?? l.wallMs,
          maxEvents: o.maxEvents ?? l.maxEvents,
          maxOutputBytes: o.maxOutputBytes ?? l.maxOutputBytes,
        }
        : l,
      options.cancelFlag,
    );
  }

  async drive(start: () => void): Promise<CallTextResult> {
    const run = this.run!;
    const { hostCalls, budget, timers } = this.parts;
    try {
      this.slice(start);
      this.holdForTimers(run);
      while (!run.result && this.state === "running") {
        await hostCalls.wait(budget, timers.nextDelay());
        if (this.state !== "running") break;
        this.slice(() => this.advance(run));
        this.holdForTimers(run);
      }
      return this.conclude(run);
    } finally {
      this.release(run);
    }
  }

  /** Like `drive`, but never waits: what is still pending on the host is reported as pending. */
  driveSync(start: () => void): EvaluateResult {
    const run = this.run!;
    try {
      this.slice(start);
      if (!run.result && this.state === "running") this.slice(() => this.settlePending(run, true));
      return this.conclude(run);
    } finally {
      this.release(run);
    }
  }

  /**
   * The code's own result is known but it left timers, or host work they may need: the result is
   * held (its events are out already) while the loop keeps running them (`timers: "wait"`).
   */
  private holdForTimers(run: Run): void {
    const { timers, hostCalls } = this.parts;
    if (run.result?.status !== "ok" || !run.waitTimers || run.callbackError || this.state !== "running") return;
    if (timers.pending === 0 && !hostCalls.waiting) return;
    run.held = run.result;
    run.result = undefined;
  }

  private conclude(run: Run): CallTextResult {
    // What the evaluation leaves (a `call`, a limit, a throw, cancel) never runs later: the host
    // calls it did not await, its queued jobs, its timers (cleared last: a discarded job may
    // still have scheduled one).
    let left = 0;
    if (this.state === "running") {
      this.parts.outcomes.dropLeftovers();
      left = this.parts.timers.clear();
    }
    if (run.callbackError) throw run.callbackError.error;
    this.assertUsable();
    if (left > 0) run.result!.timersCleared = left;
    return run.result!;
  }

  private release(run: Run): void {
    if (run.promise?.alive) run.promise.dispose();
    run.promise = undefined;
    this.parts.budget.end();
    if (run.saved) this.parts.helpers.restoreGlobals(run.saved, this.state !== "disposed" && this.state !== "broken");
    if (this.run === run) this.run = undefined;
    if (this.state === "running") this.state = "idle";
    this.parts.released();
  }

  /** Globals were defined from the host: a name that was not fixed may be now. */
  globalsChanged(): void {
    this.unfixed.clear();
  }

  /** Frees the kept functions (the sandbox is being disposed). */
  releaseFunctions(): void {
    for (const h of this.fixed.values()) if (h.alive) h.dispose();
    this.fixed.clear();
    this.unfixed.clear();
  }

  /** Frees what the evaluation in progress owns (the sandbox is being disposed). */
  abandon(): void {
    const run = this.run;
    if (!run) return;
    if (run.promise?.alive) run.promise.dispose();
    for (const { previous } of run.saved?.splice(0) ?? []) if (previous.alive) previous.dispose();
  }

  /** Runs `fn` as one synchronous slice of QuickJS work under the budget. */
  private slice(fn: () => void): void {
    const budget = this.parts.budget;
    budget.enterSlice();
    this.inSlice = true;
    try {
      fn();
    } catch (err) {
      if (err instanceof SandboxError) throw err;
      // A host exception out of QuickJS (native stack overflow, wasm abort): the runtime may be
      // half-way through an operation. Never run it again.
      this.state = "broken";
      this.brokenReason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    } finally {
      this.inSlice = false;
      budget.leaveSlice();
    }
  }

  startEval(code: string, globals: Record<string, HostValue> | undefined): void {
    const run = this.run!;
    const { ctx, outcomes, hostCalls } = this.parts;
    hostCalls.deliver();
    if (nestingDepth(code) > MAX_NESTING) {
      return outcomes.finishError(run, { name: "SyntaxError", message: `nesting too deep (more than ${MAX_NESTING} levels)`, stack: "" });
    }
    if (globals) {
      const failed = this.parts.helpers.swapGlobals(this.parts.marshal, globals, run.saved = []);
      if (failed) return outcomes.finishThrown(run, failed);
    }
    let r: VmCallResult<QuickJSHandle>;
    let wrapped = false;
    if (run.mode === "module") {
      // Named by version like imported modules, so an import of the entry file finds this one.
      r = ctx.evalCode(code, this.parts.loader.moduleName(run.filename, code), EVAL_TYPE_MODULE);
    } else {
      wrapped = mayUseAwait(code);
      r = ctx.evalCode(code, run.filename, (wrapped ? EVAL_FLAG_ASYNC : 0) | (this.parts.strict ? EVAL_FLAG_STRICT : 0));
    }
    if (r.error) return outcomes.finishThrown(run, r.error);
    run.promise = r.value;
    run.wrapped = wrapped;
    this.settlePending(run, false);
  }

  startCall(name: string, args: HostValue[], asText = false): void {
    const run = this.run!;
    const { ctx, marshal, outcomes, direct } = this.parts;
    this.parts.hostCalls.deliver();
    run.asText = asText;
    const scope = this.callScope;
    try {
      let fn = this.fixedFunction(name);
      if (!fn) {
        fn = scope.manage(ctx.getProp(ctx.global, name));
        if (ctx.typeof(fn) !== "function") {
          return outcomes.finishError(run, { name: "TypeError", message: `${name} is not a function`, stack: "" });
        }
      }
      const argHandles: QuickJSHandle[] = new Array(args.length);
      for (let i = 0; i < args.length; i++) argHandles[i] = scope.manage(marshal.fromHost(args[i]));
      const r = direct.call(fn, argHandles);
      if (r.error) return outcomes.finishThrown(run, r.error);
      run.promise = r.value;
      this.settlePending(run, false);
    } finally {
      scope.dispose();
    }
  }

  /**
   * The global function `name`, kept from its first look-up, when it can never change: a
   * non-writable, non-configurable own data property of the global object (the route host's
   * dispatcher), so reading it again would give the same function. Undefined otherwise (the
   * caller reads the global as it is now).
   */
  private fixedFunction(name: string): QuickJSHandle | undefined {
    const known = this.fixed.get(name);
    if (known !== undefined || this.unfixed.has(name)) return known;
    const { ctx, helpers } = this.parts;
    const fn = withScope((scope): QuickJSHandle | undefined => {
      // The descriptor from the Object.getOwnPropertyDescriptor the bootstrap kept (a script cannot replace it).
      const getDesc = scope.manage(ctx.getProp(helpers.boot().intrinsics, "getDesc"));
      const r = ctx.callFunction(getDesc, ctx.undefined, ctx.global, scope.manage(ctx.newString(name)));
      if (r.error) {
        r.error.dispose();
        return undefined;
      }
      const desc = scope.manage(r.value);
      if (ctx.typeof(desc) !== "object") return undefined; // not an own property
      const isTrue = (key: string) => ctx.dump(scope.manage(ctx.getProp(desc, key))) === true;
      if (isTrue("writable") || isTrue("configurable")) return undefined;
      const value = ctx.getProp(desc, "value"); // undefined for an accessor
      if (ctx.typeof(value) === "function") return value;
      value.dispose();
      return undefined;
    });
    if (fn) this.fixed.set(name, fn);
    else this.unfixed.add(name);
    return fn;
  }

  /** Continues after a wait: deliver host results, run the timers that are due, then look at the
   * awaited promise (or the held result) again. */
  private advance(run: Run): void {
    const { budget, hostCalls, outcomes, timers } = this.parts;
    if (budget.cancelRequested) budget.cancel();
    if (budget.breached) return outcomes.finishBreached(run);
    hostCalls.deliver();
    this.drainJobs();
    if (budget.breached) return outcomes.finishBreached(run);
    const thrown = timers.runDue(() => {
      this.drainJobs();
      return budget.breached === undefined;
    });
    // An exception out of a timer callback is uncaught: it ends the evaluation, as in Node.
    if (thrown) return outcomes.finishThrown(run, thrown);
    if (budget.breached) return outcomes.finishBreached(run);
    if (!run.held) return this.settlePending(run, false);
    if (timers.pending > 0 || hostCalls.waiting) return;
    run.result = { ...run.held, durationMs: budget.elapsed(), events: budget.events, outputBytes: budget.outputBytes };
    run.held = undefined;
  }

  /**
   * Drains jobs and unwraps `run.promise` as far as possible. Leaves `run.result` unset only when
   * the promise is pending on host work (the caller waits, then calls `advance`).
   */
  private settlePending(run: Run, noWait: boolean): void {
    const { ctx, budget, hostCalls, outcomes, timers } = this.parts;
    for (;;) {
      this.drainJobs();
      if (budget.breached) return outcomes.finishBreached(run);
      const h = run.promise!;
      const state = ctx.getPromiseState(h);
      if (state.type === "pending") {
        if (!noWait && (hostCalls.waiting || timers.pending > 0)) {
          if (hostCalls.ready) {
            hostCalls.deliver();
            continue;
          }
          return; // wait for the host
        }
        // Nothing can settle it: report the promise itself.
        run.promise = undefined;
        h.dispose();
        return outcomes.finishValue(run, { type: "promise", preview: "Promise { <pending> }" });
      }
      if (state.type === "rejected") {
        run.promise = undefined;
        h.dispose();
        return outcomes.finishThrown(run, state.error);
      }
      if ("notAPromise" in state && state.notAPromise) {
        run.promise = undefined;
        if (run.asText && ctx.typeof(h) === "string") {
          // callText: the string as it is, no preview (describe's) made of it.
          const text = ctx.getString(h);
          h.dispose();
          if (budget.breached) return outcomes.finishBreached(run);
          outcomes.finishValue(run, undefined);
          run.result!.text = text;
          return;
        }
        const info = run.mode === "script" || run.mode === "module" ? undefined : this.parts.marshal.describe(h);
        h.dispose();
        if (budget.breached) return outcomes.finishBreached(run);
        return outcomes.finishValue(run, info);
      }
      // Fulfilled: unwrap `{ value }` of an async eval once, then await a returned promise too.
      h.dispose();
      let v = state.value;
      if (run.wrapped) {
        run.wrapped = false;
        const inner = ctx.getProp(v, "value");
        v.dispose();
        v = inner;
      }
      run.promise = v;
    }
  }

  private drainJobs(): void {
    const { rt, budget } = this.parts;
    while (rt.hasPendingJob()) {
      const r = rt.executePendingJobs();
      if (r.error) r.error.dispose();
      if (budget.breached) return;
    }
  }
}
