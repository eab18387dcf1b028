/**
 * Two operations of the per-call path without quickjs-emscripten's per-call overhead (measured
 * on a route host's thread, a request's ~1 KB of input JSON):
 *
 * - `newString`: UTF-8 written into the engine's heap by TextEncoder.encodeInto, where
 *   `ctx.newString` runs Emscripten's JavaScript UTF-8 loops twice (length, then copy): ~1 µs
 *   instead of ~4.5 µs.
 * - `call`: the argument pointers written into a buffer allocated once, where `ctx.callFunction`
 *   makes three typed arrays and a malloc'd array per call (~1.5 µs).
 *
 * Both reach into the context's internals (`module`, `ffi`, `ctx`, `memory`: the same fields the
 * public methods use, in every 0.2x/0.3x release); when one is missing (another version), or for a
 * string that is not well-formed UTF-16 (a lone surrogate: Emscripten's encoder and TextEncoder
 * encode it differently), the public methods do it, so the result is always what they give.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";

interface Internals {
  module: { _malloc(bytes: number): number; _free(ptr: number): void; HEAPU8: Uint8Array };
  ffi: {
    QTS_NewString(ctx: number, str: number): number;
    QTS_Call(ctx: number, fn: number, thisValue: number, argc: number, argv: number): number;
    QTS_ResolveException(ctx: number, value: number): number;
    QTS_FreeValuePointer(ctx: number, value: number): void;
  };
  ctx: { value: number };
  memory: { heapValueHandle(ptr: number): QuickJSHandle };
}

/** Calls with more arguments than this take the public path. */
const ARGV_SLOTS = 8;
/** Longer strings that are not ASCII take the public path (no heap taken beyond what it takes). */
const LONG_STRING = 4096;
const encoder = new TextEncoder();
const isWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;

function internalsOf(ctx: QuickJSContext): Internals | undefined {
  const c = ctx as unknown as Partial<Internals>;
  const ok = typeof c.module?._malloc === "function" &&
    typeof c.module._free === "function" &&
    c.module.HEAPU8 instanceof Uint8Array &&
    typeof c.ffi?.QTS_NewString === "function" &&
    typeof c.ffi.QTS_Call === "function" &&
    typeof c.ffi.QTS_ResolveException === "function" &&
    typeof c.ffi.QTS_FreeValuePointer === "function" &&
    typeof c.ctx?.value === "number" &&
    typeof c.memory?.heapValueHandle === "function";
  return ok ? (c as Internals) : undefined;
}

export class DirectCalls {
  private readonly raw: Internals | undefined;
  /** The argument pointer buffer (ARGV_SLOTS pointers), allocated on first use. */
  private argv = 0;

  constructor(private readonly ctx: QuickJSContext) {
    this.raw = internalsOf(ctx);
  }

  /** `ctx.newString(s)`, faster. */
  newString(s: string): QuickJSHandle {
    const raw = this.raw;
    if (!raw || !isWellFormed || !isWellFormed.call(s)) return this.ctx.newString(s);
    // Room for ASCII first (exact, no more heap than the public path takes); a string that does
    // not fit is tried again with room for any UTF-8 when short, else left to the public path.
    return this.encoded(raw, s, s.length + 1) ?? (s.length <= LONG_STRING ? this.encoded(raw, s, s.length * 3 + 1) : undefined) ?? this.ctx.newString(s);
  }

  /** The string made from its UTF-8 in `room` bytes of heap; undefined when it does not fit. */
  private encoded(raw: Internals, s: string, room: number): QuickJSHandle | undefined {
    const { module } = raw;
    const ptr = module._malloc(room);
    if (ptr === 0) return undefined; // out of engine heap: the public path fails as it does
    try {
      const heap = module.HEAPU8; // read after the malloc, which may have grown (replaced) it
      const { read, written } = encoder.encodeInto(s, heap.subarray(ptr, ptr + room - 1));
      if (read !== s.length) return undefined;
      heap[ptr + written] = 0;
      return raw.memory.heapValueHandle(raw.ffi.QTS_NewString(raw.ctx.value, ptr));
    } finally {
      module._free(ptr);
    }
  }

  /** `ctx.callFunction(fn, ctx.undefined, args)`, faster (the caller owns `fn` and `args`). */
  call(fn: QuickJSHandle, args: readonly QuickJSHandle[]): VmCallResult<QuickJSHandle> {
    const raw = this.raw;
    if (!raw || args.length > ARGV_SLOTS) return this.ctx.callFunction(fn, this.ctx.undefined, args as QuickJSHandle[]);
    const { module, ffi } = raw;
    const ctxPtr = raw.ctx.value;
    let argv = this.argv;
    if (argv === 0) {
      argv = this.argv = module._malloc(ARGV_SLOTS * 4);
      if (argv === 0) return this.ctx.callFunction(fn, this.ctx.undefined, args as QuickJSHandle[]);
    }
    const heap = module.HEAPU8;
    for (let i = 0; i < args.length; i++) {
      const v = args[i]!.value as unknown as number; // asserts the handle is alive
      const at = argv + i * 4; // little-endian int32, as Emscripten's HEAP32
      heap[at] = v;
      heap[at + 1] = v >>> 8;
      heap[at + 2] = v >>> 16;
      heap[at + 3] = v >>> 24;
    }
    const undefinedPtr = this.ctx.undefined.value as unknown as number;
    const result = ffi.QTS_Call(ctxPtr, fn.value as unknown as number, undefinedPtr, args.length, argv);
    const error = ffi.QTS_ResolveException(ctxPtr, result);
    if (error) {
      ffi.QTS_FreeValuePointer(ctxPtr, result);
      return { error: raw.memory.heapValueHandle(error) };
    }
    return { value: raw.memory.heapValueHandle(result) };
  }

  /** Frees the argument buffer (before the context is disposed). */
  dispose(): void {
    if (this.argv !== 0 && this.raw) this.raw.module._free(this.argv);
    this.argv = 0;
  }
}
