/**
 * `setTimeout`, `setInterval`, `clearTimeout` and `clearInterval`, driven by the host: the sandbox
 * only records what is due when (this queue, on the host), and the run driver runs due callbacks
 * in slices of an evaluation between its waits (driver.ts), so no sandbox code ever blocks the host
 * thread and every callback runs under the evaluation's budget. Ids are positive integers, as in
 * browsers and Deno. Callbacks run in order of due time, then of scheduling; microtasks are drained
 * after each one (the driver's job), as in Node. What a timer holds (its function and arguments)
 * lives in the sandbox's heap, and at most `maxTimers` may be pending at once.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";

/** Delays above this (2^31 - 1 ms, what hosts keep in a signed 32-bit integer) become 1 ms, as in Node and browsers. */
const MAX_DELAY_MS = 2 ** 31 - 1;

interface Timer {
  id: number;
  due: number;
  /** ms between runs of an interval; undefined for a timeout. */
  every: number | undefined;
  fn: QuickJSHandle;
  args: QuickJSHandle[];
}

export class SandboxTimers {
  private readonly pendingTimers = new Map<number, Timer>();
  private nextId = 1;
  private installed = false;
  /** The timer whose callback runs now: QuickJS does not hold a function it calls, so clearing
   * it from its own callback must not free its handles until the call has returned. */
  private running: Timer | undefined;
  /** `(d) => +d` in the sandbox (see `delayOf`), owned. */
  private toNumber: QuickJSHandle | undefined;

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly now: () => number,
    private readonly maxTimers: number,
  ) {}

  /** Timers waiting to run. */
  get pending(): number {
    return this.pendingTimers.size;
  }

  /**
   * Defines the four globals (once, before the first sandboxed code runs, so no setter of the
   * sandbox's can be on the global object yet): plain data properties (writable, enumerable,
   * configurable), as in browsers and Node. Four native functions: cheaper than compiling
   * sandbox-side wrappers.
   */
  install(): void {
    if (this.installed) return;
    this.installed = true;
    const ctx = this.ctx;
    const define = (name: string, fn: (...args: QuickJSHandle[]) => VmCallResult<QuickJSHandle> | QuickJSHandle | undefined) => {
      const h = ctx.newFunction(name, fn);
      try {
        ctx.setProp(ctx.global, name, h);
      } finally {
        h.dispose();
      }
    };
    define("setTimeout", (fn, delay, ...args) => this.schedule("setTimeout", fn, delay, args, false));
    define("setInterval", (fn, delay, ...args) => this.schedule("setInterval", fn, delay, args, true));
    const clear = (id?: QuickJSHandle) => {
      if (id && ctx.typeof(id) === "number") this.clearOne(ctx.getNumber(id));
      return undefined;
    };
    define("clearTimeout", clear);
    define("clearInterval", clear);
  }

  private schedule(
    name: string,
    fn: QuickJSHandle | undefined,
    delay: QuickJSHandle | undefined,
    args: QuickJSHandle[],
    repeat: boolean,
  ): VmCallResult<QuickJSHandle> {
    const ctx = this.ctx;
    if (!fn || ctx.typeof(fn) !== "function") {
      return { error: ctx.newError({ name: "TypeError", message: `${name}: the callback must be a function (code strings are not evaluated)` }) };
    }
    const converted = this.delayOf(delay);
    if (typeof converted !== "number") return converted;
    // Checked after the conversion: a delay's valueOf may itself schedule timers.
    if (this.pendingTimers.size >= this.maxTimers) {
      return { error: ctx.newError({ name: "RangeError", message: `${name}: too many pending timers (the limit is ${this.maxTimers})` }) };
    }
    let ms = converted;
    if (!(ms >= 0)) ms = 0; // NaN and negative delays run as soon as possible
    if (ms > MAX_DELAY_MS) ms = 1;
    const id = this.nextId++;
    this.pendingTimers.set(id, { id, due: this.now() + ms, every: repeat ? ms : undefined, fn: fn.dup(), args: args.map((a) => a.dup()) });
    return { value: ctx.newNumber(id) };
  }

  /**
   * The delay as a number, converted as JavaScript's `+delay` does (as Node and browsers do):
   * a Symbol or BigInt is a TypeError, and an exception out of an object's `valueOf` or
   * `toString` reaches the caller (the host's `getNumber` would swallow it, leaving it pending in
   * the engine). Objects go through a sandbox function made on first need.
   */
  private delayOf(delay: QuickJSHandle | undefined): number | VmCallResult<QuickJSHandle> {
    const ctx = this.ctx;
    if (delay === undefined) return 0;
    switch (ctx.typeof(delay)) {
      case "undefined":
        return 0;
      case "number":
      case "string":
      case "boolean":
        return ctx.getNumber(delay); // no sandbox code runs for these
    }
    if (!this.toNumber) {
      const made = ctx.evalCode("(d) => +d", "<timers>");
      if (made.error) return made;
      this.toNumber = made.value;
    }
    const r = ctx.callFunction(this.toNumber, ctx.undefined, delay);
    if (r.error) return r;
    const ms = ctx.getNumber(r.value);
    r.value.dispose();
    return ms;
  }

  private clearOne(id: number): void {
    const timer = this.pendingTimers.get(id);
    if (!timer) return;
    this.pendingTimers.delete(id);
    if (timer !== this.running) release(timer);
  }

  /** ms until the earliest pending timer is due (0 when one is due now); undefined when none is pending. */
  nextDelay(): number | undefined {
    let earliest = Infinity;
    for (const t of this.pendingTimers.values()) if (t.due < earliest) earliest = t.due;
    return earliest === Infinity ? undefined : Math.max(0, earliest - this.now());
  }

  /**
   * Runs the callbacks that are due now, in order (call inside a slice of an evaluation). Timers
   * scheduled by these callbacks wait for the next turn, even with no delay. `afterEach` runs
   * after each callback (the driver drains microtasks there) and returns false to stop; a callback
   * that throws stops the turn and its error (owned by the caller) is returned.
   */
  runDue(afterEach: () => boolean): QuickJSHandle | undefined {
    const now = this.now();
    const due = [...this.pendingTimers.values()].filter((t) => t.due <= now).sort((a, b) => a.due - b.due || a.id - b.id);
    const ctx = this.ctx;
    for (const timer of due) {
      if (this.pendingTimers.get(timer.id) !== timer) continue; // cleared by an earlier callback
      if (timer.every === undefined) this.pendingTimers.delete(timer.id);
      // An interval is due again `every` ms after this run began (never in this same turn).
      else timer.due = Math.max(now, timer.due) + Math.max(1, timer.every);
      this.running = timer;
      let r: VmCallResult<QuickJSHandle>;
      try {
        r = ctx.callFunction(timer.fn, ctx.undefined, ...timer.args);
      } finally {
        this.running = undefined;
        if (this.pendingTimers.get(timer.id) !== timer) release(timer); // a timeout, or an interval it cleared
      }
      if (r.error) return r.error;
      r.value.dispose();
      if (!afterEach()) return undefined;
    }
    return undefined;
  }

  /** Clears every timer and frees what is held (the sandbox is being disposed). */
  dispose(): void {
    this.clear();
    if (this.toNumber?.alive) this.toNumber.dispose();
    this.toNumber = undefined;
  }

  /** Clears every pending timer; returns how many there were. */
  clear(): number {
    const n = this.pendingTimers.size;
    for (const timer of this.pendingTimers.values()) if (timer !== this.running) release(timer);
    this.pendingTimers.clear();
    return n;
  }
}

function release(timer: Timer): void {
  if (timer.fn.alive) timer.fn.dispose();
  for (const a of timer.args) if (a.alive) a.dispose();
}
