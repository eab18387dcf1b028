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
import { hostErrorToSandbox, type NativeCall } from "./modules.ts";

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
  /** Values of a failed `adopt` leaked: freeing the runtime will find them (see Sandbox.dispose). */
  leaked = false;
  /** The `this` of host functions called since the last `cancel`, made when first needed (an
   * evaluation that calls none allocates nothing); its signal aborts at `cancel`. */
  private call: (NativeCall & { controller: AbortController }) | undefined;

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
    // Handled before anything here can throw: `ctx.newPromise` does when the engine's memory grows
    // during it (quickjs-emscripten reads the new handles through a view the growth detached),
    // and a rejection nobody handles ends a Node process.
    const settled = p.then(
      (value) => ({ ok: true, value }) as const,
      (error: unknown) => ({ ok: false, error }) as const,
    );
    let deferred: QuickJSDeferredPromise;
    try {
      deferred = this.ctx.newPromise();
    } catch {
      // QuickJS made the promise and its resolving functions, but their handles were lost: they
      // stay referenced (a leak, not a dangling value), so freeing the runtime will fail its check.
      this.leaked = true;
      throw new Error("the host call could not be given a promise (the sandbox's memory was growing); try again");
    }
    const call: HostCall = { deferred };
    this.pending.add(call);
    void settled.then((outcome) => this.hostSettled(call, outcome));
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

  /** The `this` of a host function called now. */
  nativeCall(): NativeCall {
    if (!this.call) {
      const controller = new AbortController();
      this.call = { controller, signal: controller.signal };
    }
    return this.call;
  }

  /** Drops every pending call: its sandbox promise never settles, and its host work is told to
   * stop (a stopped or ended evaluation, dispose). */
  cancel(): void {
    const call = this.call;
    this.call = undefined;
    call?.controller.abort();
    for (const call of this.pending) call.deferred.dispose();
    this.pending.clear();
    this.settled = [];
  }

  /** Resolves when a host call settles, after `dueInMs` (the next sandbox timer), or when the wall
   * time left runs out (then marks the budget breached). */
  wait(budget: Budget, dueInMs = Infinity): Promise<void> {
    if (this.settled.length > 0) return Promise.resolve();
    const wall = budget.wallRemaining();
    const atWall = dueInMs >= wall;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        if (atWall && budget.running && !budget.breached) budget.breached = "wall_ms";
        done();
      }, Math.max(0, atWall ? wall : dueInMs));
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
