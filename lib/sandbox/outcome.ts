/**
 * Result shaping: how what happened in an evaluation becomes events (console, value, exception)
 * and its EvaluateResult. Every event is counted against the budget before it is emitted, so an
 * over-limit event is never delivered; an onEvent that throws stops the code and is rethrown to
 * the caller by the driver.
 */
import type { QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import type { ConsoleLevel } from "./console.ts";
import type { HostCalls } from "./host-calls.ts";
import { type Budget, utf8Length } from "./limits.ts";
import type { ErrorInfo, Marshal, ValueInfo } from "./marshal.ts";
import { type EvaluateResult, type EvaluateStatus, MiB, type Run, type SandboxEvent } from "./types.ts";

/** Extra heap granted while reading an out-of-memory error, so its message can be copied out. */
const OOM_HEADROOM = 4 * MiB;
/** Same outcome as QuickJS's own out-of-memory error. */
const OUT_OF_MEMORY: ErrorInfo = { name: "InternalError", message: "out of memory", stack: "InternalError: out of memory" };

interface OutcomeParts {
  rt: QuickJSRuntime;
  budget: Budget;
  marshal: Marshal;
  hostCalls: HostCalls;
  /** QuickJS's memory limit for the sandbox, bytes. */
  memoryLimit: number;
  /** The evaluation in progress, if any (console output can come at any time). */
  current(): Run | undefined;
}

export class Outcomes {
  constructor(private readonly parts: OutcomeParts) {}

  /** The console bridge's sink; false refuses the line (outside an evaluation, or over a limit). */
  console(level: ConsoleLevel, text: string): boolean {
    const run = this.parts.current();
    const budget = this.parts.budget;
    if (!run || !budget.running) return false; // console called outside an evaluation
    if (!budget.admit(utf8Length(text))) return false;
    this.emit(run, { type: "console", payload: { level, text } });
    return true;
  }

  /** A completion or return value (undefined in script and module modes). */
  finishValue(run: Run, info: ValueInfo | undefined): void {
    if (run.mode === "repl" && info) {
      if (!this.parts.budget.admit(0)) return this.finishBreached(run);
      this.emit(run, { type: "value", payload: info });
    }
    run.result = this.result("ok", info && run.mode !== "script" && run.mode !== "module" ? { value: info } : {});
  }

  /**
   * Runs `fn` (host code calling into QuickJS) with OOM_HEADROOM more heap than the sandbox's
   * limit. For work that must not fail half-way when the sandbox has used up its heap: the
   * quickjs-emscripten calls box every value in a malloc'd cell and do not check that malloc, so a
   * failing one leaves a handle to address 0, whose disposal corrupts the engine's heap (shared by
   * every sandbox of the engine).
   */
  withHeadroom<T>(fn: () => T): T {
    const { budget, rt, memoryLimit } = this.parts;
    if (budget.growthExempt) return fn();
    rt.setMemoryLimit(memoryLimit + OOM_HEADROOM);
    budget.growthExempt = true;
    try {
      return fn();
    } finally {
      rt.setMemoryLimit(memoryLimit);
      budget.growthExempt = false;
    }
  }

  /** A thrown sandbox value (handle consumed). */
  finishThrown(run: Run, errorHandle: QuickJSHandle): void {
    const { budget } = this.parts;
    if (budget.heapRefused) budget.breached ??= "memory";
    if (budget.breached) {
      errorHandle.dispose();
      return this.finishBreached(run);
    }
    // The error may be an out-of-memory: lend some heap to copy its message out.
    let info: ErrorInfo;
    try {
      info = this.withHeadroom(() => this.parts.marshal.describeError(errorHandle));
    } finally {
      errorHandle.dispose();
    }
    if (budget.breached) return this.finishBreached(run);
    this.finishError(run, info);
  }

  finishError(run: Run, info: ErrorInfo): void {
    const oom = info.name === OUT_OF_MEMORY.name && info.message === OUT_OF_MEMORY.message;
    if (!this.parts.budget.admit(0)) return this.finishBreached(run);
    this.emit(run, { type: "exception", payload: { name: info.name, message: info.message, stack: info.stack } });
    run.result = this.result("error", oom ? { error: info, limit: "memory" } : { error: info });
  }

  /** The budget stopped the code: drop its host calls and stale jobs, report the limit. */
  finishBreached(run: Run): void {
    const { budget, hostCalls } = this.parts;
    const limit = budget.breached;
    hostCalls.cancel();
    this.discardJobs();
    if (run.promise?.alive) run.promise.dispose();
    run.promise = undefined;
    if (limit === "cpu_ms" || limit === "wall_ms") run.result = this.result("timeout", { limit });
    else if (limit === "max_events" || limit === "max_output_bytes") run.result = this.result("limit_exceeded", { limit });
    else if (limit === "memory") {
      const error = { ...OUT_OF_MEMORY };
      if (budget.admit(0, true)) this.emit(run, { type: "exception", payload: error });
      run.result = this.result("error", { error, limit });
    } else if (limit === "cancelled") run.result = this.result("cancelled");
    else run.result = this.result("error", { error: { name: "Error", message: "evaluation stopped", stack: "" } });
  }

  /**
   * The evaluation has its result: what it started and did not wait for must not reach the next
   * one. Host calls it did not await are dropped (a `call`, a throw, a limit); jobs still queued
   * (a throw ends its slice before they ran) are discarded with the interrupt armed, their output
   * refused.
   */
  dropLeftovers(): void {
    const { budget, hostCalls, rt } = this.parts;
    hostCalls.cancel();
    if (!rt.hasPendingJob()) return;
    budget.stop();
    this.discardJobs();
  }

  /** Runs what is left in the job queue with the interrupt armed, so stale callbacks of a
   * stopped evaluation do not run (or print) in the next one. */
  private discardJobs(): void {
    const rt = this.parts.rt;
    for (let i = 0; i < 100 && rt.hasPendingJob(); i++) {
      const r = rt.executePendingJobs();
      if (r.error) r.error.dispose();
    }
  }

  private emit(run: Run, event: SandboxEvent): void {
    try {
      run.onEvent(event);
    } catch (error) {
      run.callbackError ??= { error };
      this.parts.budget.stop();
    }
  }

  private result(status: EvaluateStatus, extra: Partial<EvaluateResult> = {}): EvaluateResult {
    const b = this.parts.budget;
    return { status, ...extra, durationMs: b.elapsed(), events: b.events, outputBytes: b.outputBytes };
  }
}
