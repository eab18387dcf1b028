/**
 * Values across the boundary. Everything is COPIED (JSON-like data, strings, numbers, booleans,
 * null, arrays, plain objects, and top-level Uint8Array), never shared, so neither side can reach
 * the other's objects or prototypes. Previews and type names are computed inside the sandbox by
 * the prelude helpers and cross as one string.
 *
 * Both ways, a value nested deeper than MAX_JSON_DEPTH (64, lib/http/json-limits.ts) does not
 * cross as data: the host's recursive code further on (structured clone to another thread,
 * `JSON.stringify`) would run out of stack on it. A value's `json` is left out (its preview
 * stays); a host function's argument and a host value for the sandbox are refused with an error.
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { jsonTextDepth, MAX_JSON_DEPTH, valueDepth } from "#lib/http";
import type { DirectCalls } from "./direct.ts";
import { SandboxMarshalError } from "./errors.ts";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** What may cross from host to sandbox (and what host functions receive). */
export type HostValue = JsonValue | undefined | Uint8Array | HostValue[] | { [key: string]: HostValue };

/** A value as reported to the caller: JS type name, human preview, JSON when serializable. */
export interface ValueInfo {
  type: string;
  preview: string;
  json?: JsonValue;
}

/** A thrown value as reported: `message`, and a V8-like `stack` ("Name: message\n    at ..."). */
export interface ErrorInfo {
  name: string;
  message: string;
  stack: string;
}

/** Largest `json` attached to a value (its preview is always there). */
export const MAX_VALUE_JSON_CHARS = 64 * 1024;

/** Handles of the bootstrap helpers (made before the first evaluation), owned by the sandbox. */
export interface BootHelpers {
  intrinsics: QuickJSHandle;
  fromHostJson: QuickJSHandle;
  fromHostBytes: QuickJSHandle;
  defineGlobal: QuickJSHandle;
}

/** Handles of the per-evaluation-global and CommonJS helpers (loaded on first use). */
export interface LoaderHelpers {
  swapGlobal: QuickJSHandle;
  restoreGlobal: QuickJSHandle;
  makeRequire: QuickJSHandle;
  newModule: QuickJSHandle;
}

/** Handles of the formatting helpers (loaded on first use), owned by the sandbox. */
export interface FormatHelpers {
  format: QuickJSHandle;
  describe: QuickJSHandle;
  describeError: QuickJSHandle;
  toHost: QuickJSHandle;
}

export class Marshal {
  constructor(
    private readonly ctx: QuickJSContext,
    /** The bootstrap helpers, made on first need. */
    private readonly boot: () => BootHelpers,
    /** Loads the formatting helpers if needed; undefined when that failed (out of memory). */
    private readonly formatting: () => FormatHelpers | undefined,
    /** Makes strings faster than `ctx.newString` (the same strings). */
    private readonly direct?: DirectCalls,
  ) {}

  /** A sandbox string. */
  private newString(s: string): QuickJSHandle {
    return this.direct ? this.direct.newString(s) : this.ctx.newString(s);
  }

  /** type/preview/json of a sandbox value. Primitives are read directly (no call into QuickJS). */
  describe(h: QuickJSHandle): ValueInfo {
    const ctx = this.ctx;
    const t = ctx.typeof(h);
    switch (t) {
      case "undefined":
        return { type: "undefined", preview: "undefined" };
      case "number": {
        const n = ctx.getNumber(h);
        const preview = Object.is(n, -0) ? "-0" : String(n);
        return Number.isFinite(n) ? { type: "number", preview, json: n } : { type: "number", preview };
      }
      case "string": {
        const s = ctx.getString(h);
        return { type: "string", preview: quote(s), json: s };
      }
      case "boolean": {
        const b = ctx.dump(h) === true;
        return { type: "boolean", preview: String(b), json: b };
      }
    }
    const helpers = this.formatting();
    if (!helpers) return { type: t, preview: `[${t}]` };
    const r = ctx.callFunction(helpers.describe, ctx.undefined, h);
    if (r.error) {
      r.error.dispose();
      return { type: t === "object" ? "object" : t, preview: "[uninspectable]" };
    }
    const text = ctx.getString(r.value);
    r.value.dispose();
    const [type, preview, json] = JSON.parse(text) as [string, string, JsonValue?];
    // The text is `[type, preview, json]`: one level more than the value.
    if (json === undefined || jsonTextDepth(text, MAX_JSON_DEPTH + 1) > MAX_JSON_DEPTH + 1) return { type, preview };
    return { type, preview, json };
  }

  /** name/message/stack of a thrown sandbox value (Error or not). */
  describeError(h: QuickJSHandle): ErrorInfo {
    const ctx = this.ctx;
    const helpers = this.formatting();
    const r = helpers ? ctx.callFunction(helpers.describeError, ctx.undefined, h) : { error: ctx.undefined };
    if (r.error) {
      r.error.dispose();
      return { name: "Error", message: "[uninspectable exception]", stack: "" };
    }
    const text = ctx.getString(r.value);
    r.value.dispose();
    const [name, message, stack] = JSON.parse(text) as [string, string, string];
    return { name, message, stack };
  }

  /**
   * Sandbox -> host copy (arguments of host functions). Throws the sandbox error handle as
   * `{ error }` when the value cannot be copied (function, symbol, bigint, cycle).
   */
  toHost(h: QuickJSHandle): { value: HostValue } | { error: QuickJSHandle } {
    const ctx = this.ctx;
    switch (ctx.typeof(h)) {
      case "undefined":
        return { value: undefined };
      case "number":
        return { value: ctx.getNumber(h) };
      case "string":
        return { value: ctx.getString(h) };
      case "boolean":
        return { value: ctx.dump(h) === true };
    }
    const helpers = this.formatting();
    if (!helpers) return { error: ctx.newError({ name: "InternalError", message: "out of memory" }) };
    const r = ctx.callFunction(helpers.toHost, ctx.undefined, h);
    if (r.error) return { error: r.error };
    try {
      if (ctx.typeof(r.value) === "string") {
        const text = ctx.getString(r.value);
        if (jsonTextDepth(text) > MAX_JSON_DEPTH) {
          return { error: ctx.newError({ name: "RangeError", message: `cannot pass a value nested deeper than ${MAX_JSON_DEPTH} levels to the host` }) };
        }
        return { value: parseJson(text) };
      }
      const bytes = ctx.getArrayBuffer(r.value);
      try {
        return { value: bytes.value.slice() };
      } finally {
        bytes.dispose();
      }
    } finally {
      r.value.dispose();
    }
  }

  /** Host -> sandbox copy. Throws SandboxMarshalError for values that are not data. */
  fromHost(v: HostValue): QuickJSHandle {
    const ctx = this.ctx;
    switch (typeof v) {
      case "undefined":
        return ctx.undefined;
      case "number":
        return ctx.newNumber(v);
      case "string":
        return this.newString(v);
      case "boolean":
        return v ? ctx.true : ctx.false;
    }
    if (v === null) return ctx.null;
    if (v instanceof Uint8Array) {
      const buf = ctx.newArrayBuffer(v.slice().buffer);
      try {
        return this.call(this.boot().fromHostBytes, buf);
      } finally {
        buf.dispose();
      }
    }
    const text = stringifyHost(v);
    const s = this.newString(text);
    try {
      return this.call(this.boot().fromHostJson, s);
    } finally {
      s.dispose();
    }
  }

  private call(fn: QuickJSHandle, arg: QuickJSHandle): QuickJSHandle {
    const r = this.ctx.callFunction(fn, this.ctx.undefined, arg);
    if (r.error) {
      r.error.dispose(); // out of memory, in practice
      throw new SandboxMarshalError("the sandbox could not allocate the value");
    }
    return r.value;
  }
}

/** JSON.stringify that refuses what is not plain data (instead of silently dropping it). */
function stringifyHost(v: unknown): string {
  if (valueDepth(v) > MAX_JSON_DEPTH) throw new SandboxMarshalError(`a value nested deeper than ${MAX_JSON_DEPTH} levels cannot be passed into the sandbox`);
  let text: string | undefined;
  try {
    text = JSON.stringify(v, (_k, x: unknown) => {
      if (x === null || typeof x !== "object") {
        if (typeof x === "function" || typeof x === "symbol" || typeof x === "bigint") {
          throw new SandboxMarshalError(`a ${typeof x} cannot be passed into the sandbox`);
        }
        return x;
      }
      if (Array.isArray(x)) return x;
      const p = Object.getPrototypeOf(x) as unknown;
      if (p !== Object.prototype && p !== null) {
        throw new SandboxMarshalError(
          x instanceof Uint8Array ? "a Uint8Array can only be passed as a top-level value" : "only plain objects and arrays can be passed into the sandbox",
        );
      }
      return x;
    });
  } catch (err) {
    if (err instanceof SandboxMarshalError) throw err;
    throw new SandboxMarshalError(`value cannot be passed into the sandbox: ${(err as Error).message}`);
  }
  if (text === undefined) throw new SandboxMarshalError("value cannot be passed into the sandbox");
  return text;
}

/** JSON.parse that drops `__proto__` keys, so host code that later merges the value cannot be
 * tricked into changing a prototype. */
function parseJson(text: string): HostValue {
  if (text.includes('"__proto__"')) {
    return JSON.parse(text, (k, x: unknown) => (k === "__proto__" ? undefined : x)) as HostValue;
  }
  return JSON.parse(text) as HostValue;
}

// deno-lint-ignore no-control-regex
const ESC = /['\\\n\r\t\u0000-\u001f\u007f]/g;
const MAX_STR = 10000;

/** Single-quoted string preview, the same rules as the prelude's `quote`. */
function quote(s: string): string {
  let extra = "";
  if (s.length > MAX_STR) {
    extra = `... ${s.length - MAX_STR} more characters`;
    s = s.slice(0, MAX_STR);
  }
  return "'" + s.replace(ESC, escChar) + "'" + extra;
}

function escChar(c: string): string {
  switch (c) {
    case "'":
      return "\\'";
    case "\\":
      return "\\\\";
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
  }
  const code = c.charCodeAt(0);
  return "\\x" + (code < 16 ? "0" : "") + code.toString(16);
}
