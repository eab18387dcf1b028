/**
 * The web platform globals (URL, TextEncoder, crypto, structuredClone, AbortController, ...;
 * docs/sandbox.md lists them). They are plain sandbox code (lib/sandbox/js/web/, bundled into
 * web.generated.ts) installed lazily: the bootstrap defines a getter per name, and the first read
 * of any of them evaluates its chunk through the host function made here. An idle sandbox and
 * one that never touches them pay only for the getters. The few things QuickJS cannot do alone
 * (random bytes, digests, the clock) are host functions behind the marshaller: copied numbers
 * and bytes cross, nothing else.
 */
import type { QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import { type HostCallSite, newNativeFunction } from "./modules.ts";
import { withScope } from "./scope.ts";
import { WEB_CORE_SOURCE, WEB_IDNA_SOURCE, WEB_URL_SOURCE } from "./web.generated.ts";

/** Each lazily installed global and the chunk that defines it. */
export const WEB_GLOBALS = {
  URL: "url",
  URLSearchParams: "url",
  DOMException: "core",
  Event: "core",
  EventTarget: "core",
  AbortController: "core",
  AbortSignal: "core",
  TextEncoder: "core",
  TextDecoder: "core",
  atob: "core",
  btoa: "core",
  structuredClone: "core",
  queueMicrotask: "core",
  performance: "core",
  crypto: "core",
} as const;

/** WEB_GLOBALS as the bootstrap takes it: "name chunk name chunk ...". */
export const WEB_GLOBAL_LIST = Object.entries(WEB_GLOBALS).flat().join(" ");

const CHUNKS: Record<string, string> = { core: WEB_CORE_SOURCE, url: WEB_URL_SOURCE, idna: WEB_IDNA_SOURCE };

/** The standard's limit for one `crypto.getRandomValues` call, in bytes. */
const MAX_RANDOM_BYTES = 65536;
const DIGESTS = new Set(["SHA-1", "SHA-256", "SHA-384", "SHA-512"]);
/** Digests a sandbox may have in progress at once, and their bytes: host memory its heap limit
 * does not count (a copy of the data and Web Crypto's job, ~10 KB, each). None settles before the
 * slice that started them ends, so without a bound one evaluation's loop piles up hundreds of MB. */
const MAX_PENDING_DIGESTS = 1024;
const MAX_PENDING_DIGEST_BYTES = 64 * 1024 * 1024;

interface WebHostOptions {
  /** Milliseconds, monotonic: `performance.now()` counts from `createdAt`. */
  clock: () => number;
  /** The clock's reading when the sandbox was made. */
  createdAt: number;
  /** Fills its argument with cryptographically strong random bytes. */
  random: (bytes: Uint8Array) => void;
  /** The sandbox's `stackBytes`, put back after a chunk is compiled with more (below). */
  stackBytes: number;
  /** The evaluation's budget is spent (its interrupt handler: it also records the breach). */
  interrupted: () => boolean;
}

/** Extra stack a chunk may use while it is compiled: the first read of a global can come from
 * deep in sandboxed recursion, and must not fail for want of the stack its parse needs. */
const CHUNK_STACK_BYTES = 512 * 1024;

/**
 * The bootstrap's `loadWeb(chunk, api)`: evaluates a chunk (a function of `api`) and returns its
 * exports. The core chunk gets `api.host`, its host functions, made here on first load.
 */
export function newWebLoader(site: HostCallSite, options: WebHostOptions): QuickJSHandle {
  const { ctx } = site;
  const timeOrigin = Date.now() - (options.clock() - options.createdAt);
  // One count per sandbox, not per host object: a core chunk whose load failed may have made one.
  const pending = { digests: 0, bytes: 0 };
  return ctx.newFunction("loadWeb", (nameHandle: QuickJSHandle, api: QuickJSHandle): VmCallResult<QuickJSHandle> => {
    const name = ctx.typeof(nameHandle) === "string" ? ctx.getString(nameHandle) : "";
    const source = CHUNKS[name];
    if (source === undefined) return { error: ctx.newError({ name: "TypeError", message: `no web chunk named ${JSON.stringify(name)}` }) };
    // A chunk's parse is never interrupted, and QuickJS polls its interrupt handler only every
    // ~10k operations: code that makes a load fail (a replaced built-in) and reads the global again
    // in a loop would otherwise parse many chunks, seconds past its cpuMs, before the next poll.
    if (options.interrupted()) return { error: ctx.newError({ name: "InternalError", message: "interrupted" }) };
    return withScope((scope) => {
      // Only the parse gets the extra stack: it runs no sandboxed code. The chunk's body calls
      // built-ins the sandbox may have replaced, and sandboxed code must never run with more
      // than `stackBytes` (past ~75 KiB it overflows the host's stack, limits.ts).
      ctx.runtime.setMaxStackSize(options.stackBytes + CHUNK_STACK_BYTES);
      let fn: VmCallResult<QuickJSHandle>;
      try {
        fn = ctx.evalCode(source, `<web:${name}>`, { type: "global", strict: true });
      } finally {
        ctx.runtime.setMaxStackSize(options.stackBytes);
      }
      if (fn.error) return { error: fn.error };
      scope.manage(fn.value);
      if (name === "core") ctx.setProp(api, "host", scope.manage(newCoreHost(site, options, timeOrigin, pending)));
      return ctx.callFunction(fn.value, ctx.undefined, api);
    });
  });
}

/** `api.host` of the core chunk: marshalled host functions (numbers and bytes only). */
function newCoreHost(site: HostCallSite, options: WebHostOptions, timeOrigin: number, pending: { digests: number; bytes: number }): QuickJSHandle {
  const { ctx } = site;
  // No prototype: a setter the sandbox put on Object.prototype must not receive these functions
  // (setProp assigns), nor their object.
  const host = ctx.newObject(ctx.null);
  withScope((scope) => {
    ctx.setProp(host, "timeOrigin", scope.manage(ctx.newNumber(timeOrigin)));
    ctx.setProp(host, "now", scope.manage(newNativeFunction(site, "now", () => options.clock() - options.createdAt)));
    ctx.setProp(
      host,
      "randomBytes",
      scope.manage(newNativeFunction(site, "randomBytes", (n) => {
        if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > MAX_RANDOM_BYTES) {
          throw new RangeError(`randomBytes: a whole number of bytes up to ${MAX_RANDOM_BYTES}`);
        }
        const bytes = new Uint8Array(n);
        options.random(bytes);
        return bytes;
      })),
    );
    ctx.setProp(
      host,
      "digest",
      scope.manage(newNativeFunction(site, "digest", async (algorithm, data) => {
        if (typeof algorithm !== "string" || !DIGESTS.has(algorithm) || !(data instanceof Uint8Array)) throw new TypeError("digest: an algorithm and bytes");
        if (pending.digests > 0 && (pending.digests >= MAX_PENDING_DIGESTS || pending.bytes + data.length > MAX_PENDING_DIGEST_BYTES)) {
          throw new RangeError(
            `digest: at most ${MAX_PENDING_DIGESTS} digests (${MAX_PENDING_DIGEST_BYTES / 1024 / 1024} MiB) in progress at once; await some first`,
          );
        }
        pending.digests++;
        pending.bytes += data.length;
        try {
          return new Uint8Array(await crypto.subtle.digest(algorithm, data as Uint8Array<ArrayBuffer>));
        } finally {
          pending.digests--;
          pending.bytes -= data.length;
        }
      })),
    );
  });
  return host;
}

/** The default `random`: the host's CSPRNG, in the standard's 64 KiB steps. */
export function hostRandom(bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i += MAX_RANDOM_BYTES) crypto.getRandomValues(bytes.subarray(i, i + MAX_RANDOM_BYTES) as Uint8Array<ArrayBuffer>);
}
