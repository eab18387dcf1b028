/**
 * The host-promise bridge. A host function that returns a Promise gives the sandbox a promise of
 * its own; the host outcome is recorded when it settles and delivered into QuickJS only inside a
 * slice of an evaluation (resolving runs sandbox code, which must run under a budget). The run
 * driver waits here between slices.
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from "quickjs-emscripten-core";
import { SandboxMarshalError } from "./errors.ts";
import type { Budget } from "./limits.ts";
import type { HostValue, Marshal } from "./marshal.ts";
import { hostErrorToSandbox } from "./modules.ts";

interface HostCall {
  deferred: QuickJSDeferredPromise;
  outcome?: { ok: true; value: HostValue | void } | { ok: false; error: unknown };
}

export class HostCalls {
  /** Calls whose sandbox promise is still unsettled (each owns its deferred). */
  private readonly pending = new Set<HostCall>();
  /** Settled on the host, not yet delivered into the sandbox. */
  private settled: HostCall[] = [];
  private wake: (() => void) | undefined;

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly marshal: Marshal,
  ) {}

  /** Host work the sandbox may still receive: waiting for it makes sense. */
  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Host results are ready to deliver. */
  get ready(): boolean {
    return this.settled.length > 0;
  }

  /** A sandbox promise for `p` (the handle is owned by the caller). */
  adopt(p: Promise<HostValue | void>): QuickJSHandle {
    const call: HostCall = { deferred: this.ctx.newPromise() };
    this.pending.add(call);
    p.then(
      (value) => this.hostSettled(call, { ok: true, value }),
      (error: unknown) => this.hostSettled(call, { ok: false, error }),
    );
    return call.deferred.handle.dup();
  }

  private hostSettled(call: HostCall, outcome: NonNullable<HostCall["outcome"]>): void {
    if (!this.pending.has(call)) return; // cancelled or disposed
    call.outcome = outcome;
    this.settled.push(call);
    this.wake?.();
  }

  /** Delivers settled host results into the sandbox (call inside a slice: resolving may run code). */
  deliver(): void {
    if (this.settled.length === 0) return;
    const batch = this.settled;
    this.settled = [];
    for (const call of batch) {
      this.pending.delete(call);
      const { deferred, outcome } = call;
      try {
        if (outcome!.ok) this.resolve(deferred, outcome!.value as HostValue);
        else this.reject(deferred, outcome!.error);
      } catch {
        // Out of memory or interrupted while settling: the sandbox promise stays pending.
      } finally {
        deferred.dispose();
      }
    }
  }

  private resolve(deferred: QuickJSDeferredPromise, value: HostValue): void {
    let h: QuickJSHandle;
    try {
      h = this.marshal.fromHost(value);
    } catch (err) {
      return this.reject(deferred, err instanceof SandboxMarshalError ? new TypeError(err.message) : err);
    }
    try {
      deferred.resolve(h);
    } finally {
      h.dispose();
    }
  }

  private reject(deferred: QuickJSDeferredPromise, error: unknown): void {
    const e = hostErrorToSandbox(this.ctx, error);
    try {
      deferred.reject(e);
    } finally {
      e.dispose();
    }
  }

  /** Drops every pending call: its sandbox promise never settles (a stopped evaluation, dispose). */
  cancel(): void {
    for (const call of this.pending) call.deferred.dispose();
    this.pending.clear();
    this.settled = [];
  }

  /** Resolves when a host call settles, or when the wall time left runs out (then marks the
   * budget breached). */
  wait(budget: Budget): Promise<void> {
    const ms = budget.wallRemaining();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        if (budget.running && !budget.breached) budget.breached = "wall_ms";
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

  /** Ends a wait in progress now (dispose). */
  interrupt(): void {
    this.wake?.();
  }
}
