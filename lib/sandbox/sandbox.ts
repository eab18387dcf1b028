/**
 * Sandbox lifecycle and evaluation. One sandbox = one QuickJS runtime + context; its console,
 * `require` and helpers are set up once, before the first code runs (creation itself only makes
 * the runtime and context); each evaluation only resets a budget.
 *
 * An evaluation is a series of synchronous slices inside QuickJS (evaluate, drain promise jobs,
 * deliver settled host promises) separated by waits for host promises. Limits are enforced while
 * the slices run (interrupt handler, counting bridges) and on the waits (wall deadline).
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime, VmCallResult } from "quickjs-emscripten-core";
import { newConsoleEmitter, type ConsoleLevel } from "./console.ts";
import type { SandboxEngine } from "./engine.ts";
import { SandboxBrokenError, SandboxBusyError, SandboxDisposedError, SandboxError, SandboxMarshalError, SandboxOptionsError } from "./errors.ts";
import { Budget, resolveLimits, utf8Length, type EvaluationLimits, type LimitName, type SandboxLimits } from "./limits.ts";
import { Marshal, MAX_VALUE_JSON_CHARS, type BootHelpers, type ErrorInfo, type FormatHelpers, type HostValue, type LoaderHelpers, type ValueInfo } from "./marshal.ts";
import { SourceLoader, type SourceResolver } from "./loader.ts";
import { hostErrorToSandbox, ModuleRegistry, newNativeFunction, type HostCallSite, type NativeFunction, type NativeModuleSource } from "./modules.ts";
import { BOOTSTRAP_SOURCE, LOADER_SOURCE, PRELUDE_SOURCE } from "./prelude.ts";
import { MAX_NESTING, mayUseAwait, nestingDepth } from "./source.ts";

export interface SandboxOptions {
  limits?: Partial<SandboxLimits>;
  /** Capture console output as events (default true); false makes console methods no-ops. */
  console?: boolean;
  /** Native modules available through `require(name)` (a function makes its module on first use). */
  modules?: Record<string, NativeModuleSource>;
  /** Globals defined at creation: copied data, or host functions. */
  globals?: Record<string, HostValue | NativeFunction>;
  /** Native modules also exposed as globals: `{ globalName: moduleName }`. */
  moduleGlobals?: Record<string, string>;
  /** Evaluate all code in strict mode. */
  strict?: boolean;
}

export type SandboxEvent =
  | { type: "console"; payload: { level: ConsoleLevel; text: string } }
  | { type: "value"; payload: ValueInfo }
  | { type: "exception"; payload: ErrorInfo };

export type EvaluateMode = "repl" | "script" | "module";
export type EvaluateStatus = "ok" | "error" | "timeout" | "limit_exceeded";

export interface EvaluateOptions {
  /** Shown in stack traces; default `<repl>` or `<script>`. */
  filename?: string;
  /** `repl` (default) reports the completion value as a `value` event; `script` does not;
   * `module` evaluates the code as an ES module (`import`/`export`, top-level await) and
   * reports nothing either. */
  mode?: EvaluateMode;
  /** Called synchronously as each event is produced. */
  onEvent?: (event: SandboxEvent) => void;
  /** Per-evaluation overrides of the sandbox limits. */
  limits?: Partial<EvaluationLimits>;
  /** Globals defined (copied) for this evaluation only; what was there before is put back. */
  globals?: Record<string, HostValue>;
  /** Files that `require` and `import` may load during this evaluation (see loader.ts). */
  sources?: SourceResolver;
}

export interface EvaluateResult {
  status: EvaluateStatus;
  /** The completion value (repl mode) or the return value (`call`), when status is ok. */
  value?: ValueInfo;
  /** The thrown value, when status is error. */
  error?: ErrorInfo;
  /** Which limit ended the evaluation (`memory` comes with status error: out of memory). */
  limit?: LimitName;
  durationMs: number;
  events: number;
  outputBytes: number;
}

const MiB = 1024 * 1024;
/** JS_EVAL_FLAG_ASYNC: top-level await in a global script; the result is a promise of {value}. */
const EVAL_FLAG_ASYNC = 1 << 7;
const EVAL_FLAG_STRICT = 8;
const EVAL_TYPE_MODULE = 1;
/** Extra heap granted while reading an out-of-memory error, so its message can be copied out. */
const OOM_HEADROOM = 4 * MiB;
const NO_EVENTS = (): void => {};

interface HostCall {
  deferred: QuickJSDeferredPromise;
  outcome?: { ok: true; value: HostValue | void } | { ok: false; error: unknown };
}

/** State of the evaluation in progress. */
interface Run {
  mode: EvaluateMode | "call";
  filename: string;
  sources?: SourceResolver;
  /** Per-evaluation globals to put back: name and the previous descriptor (owned). */
  saved?: { name: string; previous: QuickJSHandle }[];
  onEvent: (event: SandboxEvent) => void;
  /** The promise being awaited (owned). */
  promise?: QuickJSHandle;
  /** `promise` comes from an async eval and fulfils with `{ value }`. */
  wrapped: boolean;
  result?: EvaluateResult;
  /** onEvent threw: stop and rethrow to the caller. */
  callbackError?: { error: unknown };
}

type State = "idle" | "running" | "disposed" | "broken";

export class Sandbox implements HostCallSite {
  readonly ctx: QuickJSContext;
  readonly marshal: Marshal;
  private readonly rt: QuickJSRuntime;
  private readonly budget = new Budget();
  private readonly limits: SandboxLimits;
  private readonly strict: boolean;
  private readonly captureConsole: boolean;
  /** Made by `booted()` before anything needs them. */
  private boot: BootHelpers | undefined;
  private formatting: FormatHelpers | undefined;
  private loading: LoaderHelpers | undefined;
  private readonly registry!: ModuleRegistry;
  private readonly loader!: SourceLoader;
  private state: State = "idle";
  private brokenReason = "";
  private run: Run | undefined;
  private readonly hostCalls = new Set<HostCall>();
  private settled: HostCall[] = [];
  private wake: (() => void) | undefined;
  private disposeRequested = false;

  /** Use `createSandbox`. */
  constructor(engine: SandboxEngine, options: SandboxOptions = {}) {
    this.limits = resolveLimits(options.limits);
    this.strict = options.strict === true;
    this.captureConsole = options.console !== false;
    const rt = engine.newRuntime();
    this.rt = rt;
    let ctx: QuickJSContext | undefined;
    try {
      rt.setMemoryLimit(Math.floor(this.limits.memMb * MiB));
      rt.setMaxStackSize(Math.floor(this.limits.stackBytes));
      rt.setInterruptHandler(() => this.budget.shouldInterrupt());
      this.budget.watchMemory(wasmMemoryOf(engine), Math.floor(this.limits.memMb * MiB));
      ctx = rt.newContext();
      this.ctx = ctx;
      this.registry = new ModuleRegistry(this, options.modules ?? {});
      this.marshal = new Marshal(ctx, () => this.booted(), () => this.loadFormatting());
      this.loader = new SourceLoader(ctx, () => this.loaderHelpers(), this.registry, this.strict, () => this.run);
      rt.setModuleLoader(
        (name) => this.loader.load(name),
        (base, specifier) => this.loader.normalize(base, specifier),
      );
      for (const [name, value] of Object.entries(options.globals ?? {})) this.setGlobal(name, value);
      for (const [name, module] of Object.entries(options.moduleGlobals ?? {})) {
        if (!this.registry.has(module)) throw new SandboxOptionsError(`moduleGlobals.${name}: no native module named ${JSON.stringify(module)}`);
        const h = this.registry.get(module);
        try {
          this.defineGlobal(name, h, false);
        } finally {
          h.dispose();
        }
      }
    } catch (err) {
      this.disposeHelpers();
      ctx?.dispose();
      rt.dispose();
      throw err;
    }
  }

  /**
   * Runs the bootstrap once, before the first sandboxed code (or the first host value or
   * global) needs it: it captures the built-ins the helpers use and installs `console` and
   * `require`. Deferred from creation because compiling it is most of what creation would cost
   * (and its objects most of an idle sandbox's heap); no sandboxed code runs before it, so the
   * captured built-ins are still the pristine ones.
   */
  private booted(): BootHelpers {
    if (this.boot) return this.boot;
    const ctx = this.ctx;
    const owned: QuickJSHandle[] = [];
    try {
      const emit = newConsoleEmitter(ctx, (level, text) => this.onConsole(level, text));
      owned.push(emit);
      const load = ctx.newFunction("load", (): VmCallResult<QuickJSHandle> => {
        const f = this.loadFormatting();
        return f ? { value: f.format.dup() } : { error: this.ctx.newError({ name: "InternalError", message: "out of memory" }) };
      });
      owned.push(load);
      const req = this.registry.newRequire((name, importer) => this.loader.require(name, importer));
      owned.push(req);
      const factory = ctx.unwrapResult(ctx.evalCode(BOOTSTRAP_SOURCE, "<sandbox>", { type: "global", strict: true }));
      owned.push(factory);
      const list = ctx.unwrapResult(ctx.callFunction(factory, ctx.undefined, emit, this.captureConsole ? ctx.true : ctx.false, load, req));
      owned.push(list);
      const at = (i: number): QuickJSHandle => ctx.getProp(list, i);
      this.boot = { intrinsics: at(0), fromHostJson: at(1), fromHostBytes: at(2), defineGlobal: at(3) };
      return this.boot;
    } finally {
      for (const h of owned) if (h.alive) h.dispose();
    }
  }

  /** Compiles the formatting helpers on first use (keeps creation cheap and idle sandboxes small). */
  private loadFormatting(): FormatHelpers | undefined {
    if (this.formatting) return this.formatting;
    const ctx = this.ctx;
    const fn = ctx.evalCode(PRELUDE_SOURCE, "<sandbox>", { type: "global", strict: true });
    if (fn.error) {
      fn.error.dispose();
      return undefined;
    }
    const maxJson = ctx.newNumber(MAX_VALUE_JSON_CHARS);
    const list = ctx.callFunction(fn.value, ctx.undefined, this.booted().intrinsics, maxJson);
    fn.value.dispose();
    maxJson.dispose();
    if (list.error) {
      list.error.dispose();
      return undefined;
    }
    const at = (i: number): QuickJSHandle => ctx.getProp(list.value, i);
    this.formatting = { format: at(0), describe: at(1), describeError: at(2), toHost: at(3) };
    list.value.dispose();
    return this.formatting;
  }

  /** Compiles the per-evaluation-global and CommonJS helpers on first use. */
  private loaderHelpers(): LoaderHelpers {
    if (this.loading) return this.loading;
    const ctx = this.ctx;
    const fn = ctx.unwrapResult(ctx.evalCode(LOADER_SOURCE, "<sandbox>", { type: "global", strict: true }));
    const list = ctx.callFunction(fn, ctx.undefined, this.booted().intrinsics);
    fn.dispose();
    const handle = ctx.unwrapResult(list);
    const at = (i: number): QuickJSHandle => ctx.getProp(handle, i);
    this.loading = { swapGlobal: at(0), restoreGlobal: at(1), makeRequire: at(2), newModule: at(3) };
    handle.dispose();
    return this.loading;
  }

  private disposeHelpers(): void {
    const partial = this as unknown as { registry?: ModuleRegistry; loader?: SourceLoader };
    for (const group of [this.boot, this.formatting, this.loading]) if (group) for (const h of Object.values(group)) if (h.alive) h.dispose();
    this.boot = undefined;
    this.formatting = undefined;
    this.loading = undefined;
    partial.registry?.dispose();
    partial.loader?.dispose();
  }

  /** True once disposed. */
  get disposed(): boolean {
    return this.state === "disposed";
  }

  /** Set when the engine state can no longer be trusted; every call then throws SandboxBrokenError. */
  get broken(): boolean {
    return this.state === "broken";
  }

  /** The runtime's current heap usage, bytes (for metrics). */
  memoryUsage(): number {
    this.assertUsable();
    const h = this.rt.computeMemoryUsage();
    try {
      const usage = this.ctx.dump(h) as { memory_used_size?: number };
      return usage.memory_used_size ?? 0;
    } finally {
      h.dispose();
    }
  }

  /**
   * Evaluates `code` in the global scope (state persists between calls). Resolves with the
   * outcome; rejects only for host-side problems (disposed, busy, broken, onEvent threw).
   */
  async evaluate(code: string, options: EvaluateOptions = {}): Promise<EvaluateResult> {
    this.begin(options.mode ?? "repl", options);
    return this.drive(() => this.startEval(code, options.globals));
  }

  /**
   * Like `evaluate`, but never waits for host promises: a result still pending on the host is
   * reported as a pending promise. For callers that provide only synchronous host functions.
   */
  evaluateSync(code: string, options: EvaluateOptions = {}): EvaluateResult {
    this.begin(options.mode ?? "repl", options);
    return this.driveSync(() => this.startEval(code, options.globals));
  }

  /** Evaluates a library file into the global scope (script mode). */
  loadLibrary(name: string, source: string, options: Omit<EvaluateOptions, "mode" | "filename" | "sources"> = {}): Promise<EvaluateResult> {
    return this.evaluate(source, { ...options, filename: name, mode: "script" });
  }

  /**
   * Calls the global function `name` with copied arguments; the (awaited) return value is the
   * result's `value`. Same limits and events as `evaluate` (no `value` event).
   */
  async call(name: string, args: HostValue[] = [], options: Omit<EvaluateOptions, "mode" | "filename" | "globals"> = {}): Promise<EvaluateResult> {
    this.begin("call", options);
    return this.drive(() => this.startCall(name, args));
  }

  /** Defines (or replaces) a global: copied data, or a host function. Not while running. */
  setGlobal(name: string, value: HostValue | NativeFunction): void {
    this.assertUsable();
    const h = typeof value === "function" ? newNativeFunction(this, name, value) : this.marshal.fromHost(value);
    try {
      this.defineGlobal(name, h, true);
    } finally {
      h.dispose();
    }
  }

  /** defineProperty, not assignment: a setter the sandbox put on globalThis must not run here. */
  private defineGlobal(name: string, value: QuickJSHandle, enumerable: boolean): void {
    const ctx = this.ctx;
    const key = ctx.newString(name);
    const r = ctx.callFunction(this.booted().defineGlobal, ctx.undefined, key, value, enumerable ? ctx.true : ctx.false);
    key.dispose();
    if (r.error) {
      r.error.dispose();
      throw new SandboxMarshalError(`cannot define the global ${JSON.stringify(name)} (it exists and is not configurable)`);
    }
    r.value.dispose();
  }

  /** Defines the per-evaluation globals; returns the sandbox error when one cannot be defined. */
  private swapGlobals(run: Run, globals: Record<string, HostValue>): QuickJSHandle | undefined {
    const ctx = this.ctx;
    let helpers: LoaderHelpers;
    try {
      helpers = this.loaderHelpers();
    } catch {
      return ctx.newError({ name: "InternalError", message: "out of memory" });
    }
    run.saved = [];
    for (const [name, value] of Object.entries(globals)) {
      let v: QuickJSHandle;
      try {
        v = this.marshal.fromHost(value);
      } catch (err) {
        return hostErrorToSandbox(ctx, new TypeError(`global ${name}: ${(err as Error).message}`));
      }
      const key = ctx.newString(name);
      const r = ctx.callFunction(helpers.swapGlobal, ctx.undefined, key, v);
      key.dispose();
      v.dispose();
      if (r.error) return r.error;
      run.saved.push({ name, previous: r.value });
    }
    return undefined;
  }

  private restoreGlobals(saved: { name: string; previous: QuickJSHandle }[]): void {
    const ctx = this.ctx;
    for (const { name, previous } of saved.reverse()) {
      if (this.state !== "disposed" && this.state !== "broken") {
        const key = ctx.newString(name);
        const r = ctx.callFunction(this.loading!.restoreGlobal, ctx.undefined, key, previous);
        key.dispose();
        (r.error ?? r.value).dispose();
      }
      previous.dispose();
    }
    saved.length = 0;
  }

  /** Frees the runtime and every handle. Idempotent. */
  dispose(): void {
    if (this.state === "disposed") return;
    if (this.state === "running" && this.inSlice) {
      // Called from a host function during a slice: finish once QuickJS has returned.
      this.disposeRequested = true;
      return;
    }
    const wasBroken = this.state === "broken";
    this.state = "disposed";
    this.budget.end();
    this.wake?.();
    try {
      this.cancelHostCalls();
      if (this.run?.promise?.alive) this.run.promise.dispose();
      for (const { previous } of this.run?.saved?.splice(0) ?? []) if (previous.alive) previous.dispose();
      this.disposeHelpers();
      this.ctx.dispose();
      this.rt.dispose();
    } catch (err) {
      // A broken runtime may fail its own consistency checks on free; its memory is leaked.
      if (!wasBroken) throw err;
    }
  }

  // ---- host promises -------------------------------------------------------------------------

  /** @internal HostCallSite: a host promise becomes a sandbox promise, settled in a later slice. */
  adoptHostPromise(p: Promise<HostValue | void>): QuickJSHandle {
    const call: HostCall = { deferred: this.ctx.newPromise() };
    this.hostCalls.add(call);
    p.then(
      (value) => this.hostSettled(call, { ok: true, value }),
      (error: unknown) => this.hostSettled(call, { ok: false, error }),
    );
    return call.deferred.handle.dup();
  }

  private hostSettled(call: HostCall, outcome: NonNullable<HostCall["outcome"]>): void {
    if (!this.hostCalls.has(call)) return; // cancelled or disposed
    call.outcome = outcome;
    this.settled.push(call);
    this.wake?.();
  }

  /** Delivers settled host results into the sandbox (inside a slice: resolving may run code). */
  private deliverSettled(): void {
    if (this.settled.length === 0) return;
    const batch = this.settled;
    this.settled = [];
    for (const call of batch) {
      this.hostCalls.delete(call);
      const { deferred, outcome } = call;
      try {
        if (outcome!.ok) {
          let h: QuickJSHandle;
          try {
            h = this.marshal.fromHost(outcome!.value as HostValue);
          } catch (err) {
            const e = hostErrorToSandbox(this.ctx, err instanceof SandboxMarshalError ? new TypeError(err.message) : err);
            deferred.reject(e);
            e.dispose();
            continue;
          }
          deferred.resolve(h);
          h.dispose();
        } else {
          const e = hostErrorToSandbox(this.ctx, outcome!.error);
          deferred.reject(e);
          e.dispose();
        }
      } catch {
        // Out of memory or interrupted while settling: the sandbox promise stays pending.
      } finally {
        deferred.dispose();
      }
    }
  }

  private cancelHostCalls(): void {
    for (const call of this.hostCalls) call.deferred.dispose();
    this.hostCalls.clear();
    this.settled = [];
  }

  // ---- evaluation ------------------------------------------------------------------------------

  private inSlice = false;

  private assertUsable(): void {
    if (this.state === "disposed") throw new SandboxDisposedError();
    if (this.state === "broken") throw new SandboxBrokenError(this.brokenReason);
  }

  private begin(mode: Run["mode"], options: EvaluateOptions): void {
    this.assertUsable();
    if (this.state === "running") throw new SandboxBusyError();
    if (!this.boot) {
      try {
        this.booted();
      } catch (err) {
        // Out of engine heap, in practice: the sandbox was never usable.
        this.state = "broken";
        this.brokenReason = `its bootstrap failed: ${err instanceof Error ? err.message : String(err)}`;
        throw new SandboxBrokenError(this.brokenReason);
      }
    }
    this.state = "running";
    const filename = options.filename ?? (mode === "repl" ? "<repl>" : mode === "call" ? "<call>" : "<script>");
    this.run = { mode, filename, sources: options.sources, onEvent: options.onEvent ?? NO_EVENTS, wrapped: false };
    const l = this.limits;
    const o = options.limits;
    this.budget.begin(
      o
        ? {
            cpuMs: o.cpuMs ?? l.cpuMs,
            wallMs: o.wallMs ?? l.wallMs,
            maxEvents: o.maxEvents ?? l.maxEvents,
            maxOutputBytes: o.maxOutputBytes ?? l.maxOutputBytes,
          }
        : l,
    );
  }

  private async drive(start: () => void): Promise<EvaluateResult> {
    const run = this.run!;
    try {
      this.slice(start);
      while (!run.result && this.state === "running") {
        await this.waitForHost();
        if (this.state !== "running") break;
        this.slice(() => this.advance());
      }
      return this.conclude(run);
    } finally {
      this.release(run);
    }
  }

  private driveSync(start: () => void): EvaluateResult {
    const run = this.run!;
    try {
      this.slice(start);
      if (!run.result && this.state === "running") this.slice(() => this.settlePending(true));
      return this.conclude(run);
    } finally {
      this.release(run);
    }
  }

  private conclude(run: Run): EvaluateResult {
    if (run.callbackError) throw run.callbackError.error;
    if (this.state === "disposed") throw new SandboxDisposedError();
    if (this.state === "broken") throw new SandboxBrokenError(this.brokenReason);
    return run.result!;
  }

  private release(run: Run): void {
    if (run.promise?.alive) run.promise.dispose();
    run.promise = undefined;
    this.budget.end();
    if (run.saved) this.restoreGlobals(run.saved);
    if (this.run === run) this.run = undefined;
    if (this.state === "running") this.state = "idle";
    if (this.disposeRequested) this.dispose();
  }

  /** Runs `fn` as one synchronous slice of QuickJS work under the budget. */
  private slice(fn: () => void): void {
    this.budget.enterSlice();
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
      this.budget.leaveSlice();
    }
  }

  private startEval(code: string, globals: Record<string, HostValue> | undefined): void {
    const run = this.run!;
    const ctx = this.ctx;
    this.deliverSettled();
    if (nestingDepth(code) > MAX_NESTING) {
      this.finishError({ name: "SyntaxError", message: `nesting too deep (more than ${MAX_NESTING} levels)`, stack: "" });
      return;
    }
    if (globals) {
      const failed = this.swapGlobals(run, globals);
      if (failed) return this.finishThrown(failed);
    }
    let r: VmCallResult<QuickJSHandle>;
    let wrapped = false;
    if (run.mode === "module") {
      // Named by version like imported modules, so an import of the entry file finds this one.
      r = ctx.evalCode(code, this.loader.moduleName(run.filename, code), EVAL_TYPE_MODULE);
    } else {
      wrapped = mayUseAwait(code);
      r = ctx.evalCode(code, run.filename, (wrapped ? EVAL_FLAG_ASYNC : 0) | (this.strict ? EVAL_FLAG_STRICT : 0));
    }
    if (r.error) {
      this.finishThrown(r.error);
      return;
    }
    run.promise = r.value;
    run.wrapped = wrapped;
    this.settlePending(false);
  }

  private startCall(name: string, args: HostValue[]): void {
    const ctx = this.ctx;
    this.deliverSettled();
    const fn = ctx.getProp(ctx.global, name);
    const argHandles: QuickJSHandle[] = [];
    try {
      if (ctx.typeof(fn) !== "function") {
        this.finishError({ name: "TypeError", message: `${name} is not a function`, stack: "" });
        return;
      }
      for (const a of args) argHandles.push(this.marshal.fromHost(a));
      const r = ctx.callFunction(fn, ctx.undefined, argHandles);
      if (r.error) {
        this.finishThrown(r.error);
        return;
      }
      this.run!.promise = r.value;
      this.settlePending(false);
    } finally {
      for (const h of argHandles) h.dispose();
      fn.dispose();
    }
  }

  /** Continues after a wait: deliver host results, then look at the awaited promise again. */
  private advance(): void {
    if (this.budget.breached) return this.finishBreached();
    this.deliverSettled();
    this.settlePending(false);
  }

  /**
   * Drains jobs and unwraps `run.promise` as far as possible. Leaves `run.result` unset only when
   * the promise is pending on host work (the caller waits, then calls `advance`).
   */
  private settlePending(noWait: boolean): void {
    const run = this.run!;
    const ctx = this.ctx;
    for (;;) {
      this.drainJobs();
      if (this.budget.breached) return this.finishBreached();
      const h = run.promise!;
      const state = ctx.getPromiseState(h);
      if (state.type === "pending") {
        if (!noWait && this.hostCalls.size > 0) {
          if (this.settled.length > 0) {
            this.deliverSettled();
            continue;
          }
          return; // wait for the host
        }
        // Nothing can settle it: report the promise itself.
        run.promise = undefined;
        h.dispose();
        return this.finishValue({ type: "promise", preview: "Promise { <pending> }" });
      }
      if (state.type === "rejected") {
        run.promise = undefined;
        h.dispose();
        return this.finishThrown(state.error);
      }
      if ("notAPromise" in state && state.notAPromise) {
        run.promise = undefined;
        const info = run.mode === "script" || run.mode === "module" ? undefined : this.marshal.describe(h);
        h.dispose();
        if (this.budget.breached) return this.finishBreached();
        return this.finishValue(info);
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
    const rt = this.rt;
    while (rt.hasPendingJob()) {
      const r = rt.executePendingJobs();
      if (r.error) r.error.dispose();
      if (this.budget.breached) return;
    }
  }

  /** Runs what is left in the job queue with the interrupt armed, so stale callbacks of a
   * stopped evaluation do not run (or print) in the next one. */
  private discardJobs(): void {
    for (let i = 0; i < 100 && this.rt.hasPendingJob(); i++) {
      const r = this.rt.executePendingJobs();
      if (r.error) r.error.dispose();
    }
  }

  private waitForHost(): Promise<void> {
    const ms = this.budget.wallRemaining();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        if (this.budget.running && !this.budget.breached) this.budget.breached = "wall_ms";
        done();
      }, Math.max(0, ms));
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
    });
  }

  // ---- outcomes --------------------------------------------------------------------------------

  private emit(event: SandboxEvent): void {
    const run = this.run!;
    try {
      run.onEvent(event);
    } catch (error) {
      run.callbackError ??= { error };
      this.budget.stop();
    }
  }

  private onConsole(level: ConsoleLevel, text: string): boolean {
    const run = this.run;
    if (!run || !this.budget.running) return false; // console called outside an evaluation
    if (!this.budget.admit(utf8Length(text))) return false;
    this.emit({ type: "console", payload: { level, text } });
    return true;
  }

  private result(status: EvaluateStatus, extra: Partial<EvaluateResult> = {}): EvaluateResult {
    const b = this.budget;
    return { status, ...extra, durationMs: b.elapsed(), events: b.events, outputBytes: b.outputBytes };
  }

  private finishValue(info: ValueInfo | undefined): void {
    const run = this.run!;
    if (run.mode === "repl" && info) {
      if (!this.budget.admit(0)) return this.finishBreached();
      this.emit({ type: "value", payload: info });
    }
    run.result = this.result("ok", info && run.mode !== "script" && run.mode !== "module" ? { value: info } : {});
  }

  /** A thrown sandbox value (handle consumed). */
  private finishThrown(errorHandle: QuickJSHandle): void {
    if (this.budget.heapRefused) this.budget.breached ??= "memory";
    if (this.budget.breached) {
      errorHandle.dispose();
      return this.finishBreached();
    }
    // The error may be an out-of-memory: lend some heap to copy its message out.
    const limit = Math.floor(this.limits.memMb * MiB);
    this.rt.setMemoryLimit(limit + OOM_HEADROOM);
    this.budget.growthExempt = true;
    let info: ErrorInfo;
    try {
      info = this.marshal.describeError(errorHandle);
    } finally {
      errorHandle.dispose();
      this.rt.setMemoryLimit(limit);
      this.budget.growthExempt = false;
    }
    if (this.budget.breached) return this.finishBreached();
    this.finishError(info);
  }

  private finishError(info: ErrorInfo): void {
    const run = this.run!;
    const oom = info.name === "InternalError" && info.message === "out of memory";
    if (!this.budget.admit(0)) return this.finishBreached();
    this.emit({ type: "exception", payload: { name: info.name, message: info.message, stack: info.stack } });
    run.result = this.result("error", oom ? { error: info, limit: "memory" } : { error: info });
  }

  private finishBreached(): void {
    const run = this.run!;
    const limit = this.budget.breached;
    this.cancelHostCalls();
    this.discardJobs();
    if (run.promise?.alive) run.promise.dispose();
    run.promise = undefined;
    if (limit === "cpu_ms" || limit === "wall_ms") run.result = this.result("timeout", { limit });
    else if (limit === "max_events" || limit === "max_output_bytes") run.result = this.result("limit_exceeded", { limit });
    else if (limit === "memory") {
      // Same outcome as QuickJS's own out-of-memory error.
      const error = { name: "InternalError", message: "out of memory", stack: "InternalError: out of memory" };
      if (this.budget.admit(0, true)) this.emit({ type: "exception", payload: error });
      run.result = this.result("error", { error, limit });
    } else run.result = this.result("error", { error: { name: "Error", message: "evaluation stopped", stack: "" } });
  }
}

function wasmMemoryOf(engine: SandboxEngine): WebAssembly.Memory | undefined {
  try {
    return engine.getWasmMemory?.();
  } catch {
    return undefined; // a variant without access to its memory: QuickJS's own limit only
  }
}

// `using sb = createSandbox(...)` where the runtime has explicit resource management (defined
// at run time: not every TypeScript lib this file is checked with declares Symbol.dispose).
const disposeSymbol = (Symbol as unknown as { dispose?: symbol }).dispose;
if (disposeSymbol) {
  Object.defineProperty(Sandbox.prototype, disposeSymbol, {
    configurable: true,
    writable: true,
    value(this: Sandbox) {
      this.dispose();
    },
  });
}

/** Creates a sandbox on a loaded engine (see `loadQuickJS`). */
export function createSandbox(engine: SandboxEngine, options: SandboxOptions = {}): Sandbox {
  return new Sandbox(engine, options);
}
