/**
 * Sandbox lifecycle and public API. One sandbox = one QuickJS runtime + context; creation only
 * makes those (the helpers are set up before the first code runs, bootstrap.ts); each evaluation
 * only resets a budget. The work is split by seam: bootstrap.ts (sandbox-side helpers),
 * host-calls.ts (host promises), driver.ts (the evaluation loop and the sandbox's state),
 * outcome.ts (events and results). This class wires them and owns creation and disposal.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { SandboxHelpers } from "./bootstrap.ts";
import { DirectCalls } from "./direct.ts";
import { RunDriver } from "./driver.ts";
import type { SandboxEngine } from "./engine.ts";
import { SandboxOptionsError } from "./errors.ts";
import { HostCalls } from "./host-calls.ts";
import { Budget, resolveLimits } from "./limits.ts";
import { SourceLoader } from "./loader.ts";
import { type HostValue, Marshal } from "./marshal.ts";
import { type HostCallSite, ModuleRegistry, type NativeCall, type NativeFunction, newNativeFunction } from "./modules.ts";
import { Outcomes } from "./outcome.ts";
import { withScope } from "./scope.ts";
import { hostRandom, newWebLoader } from "./web.ts";
import { SandboxTimers } from "./timers.ts";
import { type CallTextResult, type EvaluateOptions, type EvaluateResult, MiB, type SandboxOptions } from "./types.ts";

export type { CallTextResult, EvaluateMode, EvaluateOptions, EvaluateResult, EvaluateStatus, SandboxEvent, SandboxOptions } from "./types.ts";

export class Sandbox implements HostCallSite {
  readonly ctx: QuickJSContext;
  readonly marshal: Marshal;
  private readonly rt: QuickJSRuntime;
  private readonly budget: Budget;
  private readonly helpers!: SandboxHelpers;
  private readonly hostCalls!: HostCalls;
  private readonly driver!: RunDriver;
  private readonly registry!: ModuleRegistry;
  private readonly loader!: SourceLoader;
  private readonly direct!: DirectCalls;
  private readonly timers!: SandboxTimers;
  private disposeRequested = false;

  /** Use `createSandbox`. */
  constructor(engine: SandboxEngine, options: SandboxOptions = {}) {
    this.budget = new Budget(options.clock);
    const limits = resolveLimits(options.limits);
    const memoryLimit = Math.floor(limits.memMb * MiB);
    const rt = engine.newRuntime();
    this.rt = rt;
    let ctx: QuickJSContext | undefined;
    try {
      rt.setMemoryLimit(memoryLimit);
      rt.setMaxStackSize(Math.floor(limits.stackBytes));
      rt.setInterruptHandler(() => this.budget.shouldInterrupt());
      this.budget.watchMemory(wasmMemoryOf(engine), memoryLimit);
      ctx = rt.newContext();
      this.ctx = ctx;
      const strict = options.strict === true;
      const clock = options.clock ?? (() => performance.now()), createdAt = clock(); // performance.now() counts from here
      const registry = (this.registry = new ModuleRegistry(this, options.modules ?? {}, options.missingModule));
      const helpers: SandboxHelpers = (this.helpers = new SandboxHelpers(ctx, {
        captureConsole: options.console !== false,
        onConsole: (level, text) => outcomes.console(level, text),
        newRequire: (): QuickJSHandle => registry.newRequire((name, importer) => loader.require(name, importer)),
        webGlobals: options.webGlobals,
        withHeadroom: (fn) => outcomes.withHeadroom(fn),
        newWebLoader: (): QuickJSHandle =>
          newWebLoader(this, {
            clock,
            createdAt,
            random: options.random ?? hostRandom,
            stackBytes: Math.floor(limits.stackBytes),
            interrupted: () => this.budget.shouldInterrupt(),
          }),
      }));
      const direct = (this.direct = new DirectCalls(ctx));
      const marshal = (this.marshal = new Marshal(ctx, () => helpers.boot(), () => helpers.formatting(), direct));
      const loader: SourceLoader = (this.loader = new SourceLoader(ctx, () => helpers.loader(), registry, strict, () => this.driver.run));
      const hostCalls = (this.hostCalls = new HostCalls(ctx, marshal));
      const { budget } = this;
      const timers = (this.timers = new SandboxTimers(ctx, clock, limits.maxTimers));
      const outcomes = new Outcomes({ rt, budget, marshal, hostCalls, memoryLimit, current: () => this.driver.run });
      this.driver = new RunDriver({
        ctx,
        rt,
        budget,
        limits,
        strict,
        marshal,
        helpers,
        hostCalls,
        loader,
        outcomes,
        direct,
        timers,
        released: () => this.disposeRequested && this.dispose(),
      });
      rt.setModuleLoader(
        (name) => loader.load(name),
        (base, specifier) => loader.normalize(base, specifier),
      );
      for (const [name, value] of Object.entries(options.globals ?? {})) this.setGlobal(name, value);
      for (const [name, module] of Object.entries(options.moduleGlobals ?? {})) {
        if (!registry.has(module)) throw new SandboxOptionsError(`moduleGlobals.${name}: no native module named ${JSON.stringify(module)}`);
        withScope((scope) => helpers.defineGlobal(name, scope.manage(registry.get(module)), false));
      }
    } catch (err) {
      this.disposeParts();
      ctx?.dispose();
      rt.dispose();
      throw err;
    }
  }

  /** True once disposed. */
  get disposed(): boolean {
    return this.driver.state === "disposed";
  }

  /** Set when the engine state can no longer be trusted; every call then throws SandboxBrokenError. */
  get broken(): boolean {
    return this.driver.state === "broken";
  }

  /** The runtime's current heap usage, bytes (for metrics). */
  memoryUsage(): number {
    this.driver.assertUsable();
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
    const driver = this.driver;
    driver.begin(options.mode ?? "repl", options);
    return driver.drive(() => driver.startEval(code, options.globals));
  }

  /**
   * Like `evaluate`, but never waits for host promises: a result still pending on the host is
   * reported as a pending promise. For callers that provide only synchronous host functions.
   */
  evaluateSync(code: string, options: EvaluateOptions = {}): EvaluateResult {
    const driver = this.driver;
    driver.begin(options.mode ?? "repl", options);
    return driver.driveSync(() => driver.startEval(code, options.globals));
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
    const driver = this.driver;
    driver.begin("call", options);
    return driver.drive(() => driver.startCall(name, args));
  }

  /**
   * `call` for a function that returns a string (or a promise of one): the string is the result's
   * `text`, as it is, with no `value` (its preview is never made). Any other outcome is as `call`
   * has it. The route host's per-request path.
   */
  async callText(name: string, args: HostValue[] = [], options: Omit<EvaluateOptions, "mode" | "filename" | "globals"> = {}): Promise<CallTextResult> {
    const driver = this.driver;
    driver.begin("call", options);
    return driver.drive(() => driver.startCall(name, args, true));
  }

  /**
   * Cancels the evaluation in progress: it ends with status `cancelled` as soon as its code is
   * next interrupted (spinning code: within QuickJS's interrupt poll) or its wait ends (now), and
   * its pending timers and host calls are dropped. False when nothing is running.
   */
  cancel(): boolean {
    if (this.driver.state !== "running") return false;
    this.budget.cancel();
    this.hostCalls.interrupt();
    return true;
  }

  /** Defines (or replaces) a global: copied data, or a host function. Not while running. */
  setGlobal(name: string, value: HostValue | NativeFunction): void {
    this.driver.assertUsable();
    withScope((scope) => {
      const h = scope.manage(typeof value === "function" ? newNativeFunction(this, name, value) : this.marshal.fromHost(value));
      this.helpers.defineGlobal(name, h, true);
    });
    this.driver.globalsChanged();
  }

  /** Frees the runtime and every handle. Idempotent. */
  dispose(): void {
    const driver = this.driver;
    if (driver.state === "disposed") return;
    if (driver.state === "running" && driver.inSlice) {
      // Called from a host function during a slice: finish once QuickJS has returned.
      this.disposeRequested = true;
      return;
    }
    const wasBroken = driver.state === "broken";
    driver.state = "disposed";
    this.budget.end();
    this.hostCalls.interrupt();
    try {
      this.hostCalls.cancel();
      driver.abandon();
      this.disposeParts();
      this.ctx.dispose();
      this.rt.dispose();
    } catch (err) {
      // A broken runtime, or one with values a host call leaked, may fail its own consistency
      // checks on free; its memory is leaked.
      if (!wasBroken && !this.hostCalls.leaked) throw err;
    }
  }

  /** @internal HostCallSite: a host promise becomes a sandbox promise, settled in a later slice. */
  adoptHostPromise(p: Promise<HostValue | void>): QuickJSHandle {
    return this.hostCalls.adopt(p);
  }

  /** @internal HostCallSite: the `this` of a host function called now. */
  nativeCall(): NativeCall {
    return this.hostCalls.nativeCall();
  }

  /** Frees the helper handles and module caches (also of a sandbox whose creation failed half-way). */
  private disposeParts(): void {
    const partial = this as unknown as {
      helpers?: SandboxHelpers;
      registry?: ModuleRegistry;
      loader?: SourceLoader;
      driver?: RunDriver;
      direct?: DirectCalls;
      timers?: SandboxTimers;
    };
    partial.timers?.dispose();
    partial.driver?.releaseFunctions();
    partial.direct?.dispose();
    partial.helpers?.dispose();
    partial.registry?.dispose();
    partial.loader?.dispose();
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
