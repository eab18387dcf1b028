/**
 * The budget of one evaluation: CPU and wall deadlines, event and output-byte counts. It is
 * checked WHILE the code runs: QuickJS polls `shouldInterrupt` (every ~10k bytecode ops), and the
 * console/host bridges call `admit` before emitting anything.
 */
import { SandboxOptionsError } from "./errors.ts";

export interface SandboxLimits {
  /** CPU time inside QuickJS per evaluation (sync slices added up), ms. */
  cpuMs: number;
  /** Wall time per evaluation, including waits for host promises, ms. */
  wallMs: number;
  /** Heap limit of the QuickJS runtime, MiB. */
  memMb: number;
  /** Events (console, value, exception) per evaluation. */
  maxEvents: number;
  /** UTF-8 bytes of console text per evaluation. */
  maxOutputBytes: number;
  /**
   * QuickJS stack limit, bytes. Small on purpose: QuickJS runs on the host's native stack (wasm
   * frames), and some engine paths (JSON.stringify of deep nesting) use ~12x more native stack
   * than QuickJS accounts for; above ~75 KiB those overflow the HOST stack instead of throwing
   * a catchable `InternalError: stack overflow`. 64 KiB allows ~370 plain JS frames.
   */
  stackBytes: number;
  /** Timers (`setTimeout`, `setInterval`) that may be pending at once (timers.ts). */
  maxTimers: number;
}

/** Limits that may be changed per evaluation (the others belong to the runtime). */
export type EvaluationLimits = Pick<SandboxLimits, "cpuMs" | "wallMs" | "maxEvents" | "maxOutputBytes">;

export type LimitName = "max_events" | "max_output_bytes" | "cpu_ms" | "wall_ms" | "memory";

/** The session service's defaults (spec: cpu 5000, wall 30000, 128 MiB, 1000 events, 512 KiB). */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  cpuMs: 5000,
  wallMs: 30000,
  memMb: 128,
  maxEvents: 1000,
  maxOutputBytes: 512 * 1024,
  stackBytes: 64 * 1024,
  maxTimers: 1000,
});

export function resolveLimits(given: Partial<SandboxLimits> | undefined, base: Readonly<SandboxLimits> = DEFAULT_LIMITS): SandboxLimits {
  const out = { ...base, ...stripUndefined(given) };
  for (const [k, v] of Object.entries(out)) {
    if (typeof v !== "number" || Number.isNaN(v) || v < 0) throw new SandboxOptionsError(`limits.${k} must be a non-negative number`);
  }
  if (out.memMb <= 0 || out.stackBytes <= 0) throw new SandboxOptionsError("limits.memMb and limits.stackBytes must be positive");
  return out;
}

function stripUndefined<T extends object>(o: T | undefined): Partial<T> {
  const r: Partial<T> = {};
  if (o) { for (const [k, v] of Object.entries(o)) if (v !== undefined) (r as Record<string, unknown>)[k] = v; }
  return r;
}

/** UTF-8 length without allocating (TextEncoder would copy the string). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // surrogate pair: 2 UTF-16 units -> 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

/**
 * One per sandbox, reset by `begin` for each evaluation (no allocation per evaluation).
 * CPU time is the sum of the synchronous slices spent inside QuickJS; wall time runs from `begin`.
 * Both are read from `now` (milliseconds; `performance.now` unless a test passes a clock of its own).
 */
export class Budget {
  constructor(private readonly now: () => number = () => performance.now()) {}

  running = false;
  /** Why the code was stopped: a limit, `stopped` by the host (e.g. an event callback threw), or
   * `cancelled` (Sandbox.cancel, or the evaluation's cancel flag set from another thread). */
  breached: LimitName | "stopped" | "cancelled" | undefined;
  /** Set (non-zero) from any thread to cancel the evaluation; read by the interrupt handler, so
   * code that spins is stopped without the host's event loop (see EvaluateOptions.cancelFlag). */
  private cancelFlag: Int32Array | undefined;
  events = 0;
  outputBytes = 0;
  startedAt = 0;
  private limits: EvaluationLimits = DEFAULT_LIMITS;
  private cpuUsed = 0;
  private sliceStart = 0;
  private sliceCpuDeadline = Infinity;
  private sliceDeadline = Infinity;
  private wallDeadline = Infinity;
  // Heap growth watch (see `watchMemory`).
  private memory: WebAssembly.Memory | undefined;
  private gate: GrowthGate | undefined;
  private previousActive: Budget | undefined;
  private memoryLimit = Infinity;
  private memoryGrowth = 0;
  private sliceMemoryStart = 0;
  /** While set, the heap may grow regardless of the budget (reading an out-of-memory error). */
  growthExempt = false;
  /** The last heap growth asked for was refused: allocations are failing (out of memory). */
  heapRefused = false;

  /**
   * QuickJS's own memory limit is weak under Emscripten: its allocator cannot ask malloc for
   * block sizes, so it counts ~8 bytes per allocation and only refuses single allocations above
   * the limit. As the effective guard, an evaluation may not grow the engine's WebAssembly heap
   * (shared by all sandboxes of the engine) by more than `limitBytes`: a growth past it is refused
   * when it is asked for (see `growthGate`), so the allocation fails at once with QuickJS's
   * out-of-memory error; the interrupt poll checks it too.
   */
  watchMemory(memory: WebAssembly.Memory | undefined, limitBytes: number): void {
    this.memory = memory;
    this.memoryLimit = limitBytes;
    this.gate = memory ? growthGate(memory) : undefined;
  }

  /** Called by the growth gate: may the heap grow by `bytes` now? */
  admitGrowth(bytes: number): boolean {
    if (!this.running || !this.memory || this.growthExempt) return true;
    // Emscripten asks again with smaller sizes after a refusal; only the last answer counts.
    this.heapRefused = this.memoryGrowth + this.memory.buffer.byteLength + bytes - this.sliceMemoryStart > this.memoryLimit;
    return !this.heapRefused;
  }

  begin(limits: EvaluationLimits, cancelFlag?: Int32Array): void {
    this.limits = limits;
    this.cancelFlag = cancelFlag;
    this.running = true;
    this.breached = undefined;
    this.events = 0;
    this.outputBytes = 0;
    this.cpuUsed = 0;
    this.memoryGrowth = 0;
    this.heapRefused = false;
    this.startedAt = this.now();
    this.wallDeadline = this.startedAt + limits.wallMs;
  }

  end(): void {
    this.running = false;
    this.cancelFlag = undefined;
    this.sliceDeadline = Infinity;
  }

  /** Before running QuickJS code synchronously. */
  enterSlice(): void {
    const now = this.now();
    this.sliceStart = now;
    this.sliceCpuDeadline = now + (this.limits.cpuMs - this.cpuUsed);
    this.sliceDeadline = Math.min(this.sliceCpuDeadline, this.wallDeadline);
    if (this.memory) this.sliceMemoryStart = this.memory.buffer.byteLength;
    if (this.gate) {
      this.previousActive = this.gate.active;
      this.gate.active = this;
    }
  }

  /** After a synchronous slice (before awaiting the host). */
  leaveSlice(): void {
    this.cpuUsed += this.now() - this.sliceStart;
    this.sliceDeadline = Infinity;
    if (this.memory) this.memoryGrowth += this.memory.buffer.byteLength - this.sliceMemoryStart;
    if (this.gate) {
      this.gate.active = this.previousActive;
      this.previousActive = undefined;
    }
  }

  /** The QuickJS interrupt handler. Hot: no allocation. Outside an evaluation no sandbox code
   * runs, so it never interrupts our own helpers then. */
  shouldInterrupt(): boolean {
    if (!this.running) return false;
    if (this.breached !== undefined) return true;
    if (this.cancelFlag !== undefined && Atomics.load(this.cancelFlag, 0) !== 0) {
      this.breached = "cancelled";
      return true;
    }
    // Out of heap: QuickJS may not even manage to make its error object (it then throws an
    // uncatchable null), so the evaluation ends here as out of memory.
    if (this.heapRefused || (this.memory && this.memoryGrowth + this.memory.buffer.byteLength - this.sliceMemoryStart > this.memoryLimit)) {
      this.breached = "memory";
      return true;
    }
    const now = this.now();
    if (now < this.sliceDeadline) return false;
    this.breached = now >= this.sliceCpuDeadline && this.sliceCpuDeadline <= this.wallDeadline ? "cpu_ms" : "wall_ms";
    return true;
  }

  /** Wall time left, ms (for waits on host promises). */
  wallRemaining(): number {
    return this.wallDeadline - this.now();
  }

  /**
   * Counts one event of `bytes` output bytes. Returns false (and records the breach) when it does
   * not fit, so the caller drops the event and stops the code. `afterBreach`: the event that
   * reports a breach (out of memory) itself, counted if it fits.
   */
  admit(bytes: number, afterBreach = false): boolean {
    if (this.breached !== undefined && !afterBreach) return false;
    if (this.events + 1 > this.limits.maxEvents) {
      this.breached ??= "max_events";
      return false;
    }
    if (this.outputBytes + bytes > this.limits.maxOutputBytes) {
      this.breached ??= "max_output_bytes";
      return false;
    }
    this.events++;
    this.outputBytes += bytes;
    return true;
  }

  /** Stops the running code at the next interrupt check. */
  stop(): void {
    this.breached ??= "stopped";
  }

  /** Cancels the evaluation: the code stops at the next interrupt check (or wait). */
  cancel(): void {
    if (this.running) this.breached ??= "cancelled";
  }

  /** The cancel flag was set from another thread (checked between slices, when no code runs). */
  get cancelRequested(): boolean {
    return this.cancelFlag !== undefined && Atomics.load(this.cancelFlag, 0) !== 0;
  }

  elapsed(): number {
    return this.now() - this.startedAt;
  }
}

/** Which budget's slice is running on an engine's memory now (slices never overlap). */
interface GrowthGate {
  active: Budget | undefined;
}

const gates = new WeakMap<WebAssembly.Memory, GrowthGate>();

/**
 * Wraps `grow` of an engine's memory (Emscripten's heap resize calls it, trying smaller sizes
 * when one is refused) so the budget of the running slice can refuse growth past its limit.
 * Outside slices (sandbox creation, host-side copies) growth is bounded only by `maxHeapMb`.
 */
function growthGate(memory: WebAssembly.Memory): GrowthGate {
  const gate = gates.get(memory);
  if (gate) return gate;
  const g: GrowthGate = { active: undefined };
  const grow = memory.grow.bind(memory);
  Object.defineProperty(memory, "grow", {
    configurable: true,
    writable: true,
    value(delta: number): number {
      if (g.active && !g.active.admitGrowth(delta * 65536)) throw new RangeError("sandbox memory limit reached");
      return grow(delta);
    },
  });
  gates.set(memory, g);
  return g;
}
