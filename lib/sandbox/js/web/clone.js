/**
 * structuredClone (HTML's StructuredSerialize/Deserialize in one pass) for what QuickJS has:
 * primitives, wrapper objects, Date, RegExp, ArrayBuffer, typed arrays and DataView (a shared
 * buffer stays shared), Map, Set, errors, arrays and plain objects, with cycles. Anything else
 * that is not an ordinary object (functions, symbols, promises, weak collections, DOM-like
 * objects) is a DataCloneError. `transfer` is not supported (a non-empty list is a DataCloneError).
 */
import { DOMException } from "./dom-exception.js";

const toTag = Object.prototype.toString;
const ERROR_NAMES = ["Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError"];
const TYPED = {
  __proto__: null,
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};
const typedTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;
const abSlice = ArrayBuffer.prototype.slice;
const getTime = Date.prototype.getTime;
const mapForEach = Map.prototype.forEach, setForEach = Set.prototype.forEach;
const valueOf = {
  "[object Boolean]": Boolean.prototype.valueOf,
  "[object Number]": Number.prototype.valueOf,
  "[object String]": String.prototype.valueOf,
  "[object BigInt]": BigInt.prototype.valueOf,
};

function cannot(what) {
  return new DOMException(what + " could not be cloned.", "DataCloneError");
}

export function structuredClone(value, options = undefined) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
  if (options != null && options.transfer !== undefined) {
    const list = Array.from(options.transfer);
    if (list.length > 0) throw cannot("Transferring");
  }
  const memory = new Map();
  return clone(value, memory);
}

function clone(v, memory) {
  const type = typeof v;
  if (type === "symbol") throw cannot(String(v));
  if (type === "function") throw cannot(describeFunction(v));
  if (v === null || type !== "object") return v;
  const seen = memory.get(v);
  if (seen !== undefined) return seen;
  const tag = toTag.call(v);
  let out;
  switch (tag) {
    case "[object Boolean]":
    case "[object Number]":
    case "[object String]":
    case "[object BigInt]":
      out = Object(valueOf[tag].call(v));
      memory.set(v, out);
      return out;
    case "[object Date]":
      out = new Date(getTime.call(v));
      memory.set(v, out);
      return out;
    case "[object RegExp]":
      out = new RegExp(v.source, v.flags);
      memory.set(v, out);
      return out;
    case "[object ArrayBuffer]":
      out = abSlice.call(v, 0);
      memory.set(v, out);
      return out;
    case "[object SharedArrayBuffer]":
      throw cannot("SharedArrayBuffer");
    case "[object DataView]": {
      const buffer = clone(v.buffer, memory);
      out = new DataView(buffer, v.byteOffset, v.byteLength);
      memory.set(v, out);
      return out;
    }
    case "[object Map]": {
      out = new Map();
      memory.set(v, out);
      const entries = [];
      mapForEach.call(v, (val, key) => entries.push(key, val));
      for (let i = 0; i < entries.length; i += 2) out.set(clone(entries[i], memory), clone(entries[i + 1], memory));
      return out;
    }
    case "[object Set]": {
      out = new Set();
      memory.set(v, out);
      const items = [];
      setForEach.call(v, (val) => items.push(val));
      for (const item of items) out.add(clone(item, memory));
      return out;
    }
    case "[object Error]":
      return cloneError(v, memory);
    case "[object Array]": {
      out = new Array(v.length);
      memory.set(v, out);
      copyProperties(v, out, memory);
      return out;
    }
    case "[object Object]":
    case "[object Arguments]":
      break;
    default: {
      const name = ArrayBuffer.isView(v) ? typedTag.call(v) : undefined;
      if (name) {
        const buffer = clone(v.buffer, memory);
        out = new TYPED[name](buffer, v.byteOffset, v.length);
        memory.set(v, out);
        return out;
      }
      throw cannot(tag.slice(8, -1) + " object");
    }
  }
  if (v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet || (typeof WeakRef === "function" && v instanceof WeakRef)) {
    throw cannot(tag.slice(8, -1) + " object");
  }
  out = {};
  memory.set(v, out);
  copyProperties(v, out, memory);
  return out;
}

function describeFunction(f) {
  let src = "";
  try {
    src = Function.prototype.toString.call(f);
  } catch {
    // a revoked proxy
  }
  return src.length > 60 ? src.slice(0, 57) + "..." : src || "function";
}

/** Own enumerable string keys, read with [[Get]] (getters run), as StructuredSerialize does. */
function copyProperties(from, to, memory) {
  for (const key of Object.keys(from)) {
    if (!Object.prototype.propertyIsEnumerable.call(from, key)) continue;
    to[key] = clone(from[key], memory);
  }
}

function cloneError(v, memory) {
  const name = v.name;
  const out = Object.create(ERROR_CTORS[ERROR_NAMES.indexOf(name) >= 0 ? name : "Error"].prototype);
  memory.set(v, out);
  const d = Object.getOwnPropertyDescriptor(v, "message");
  if (d && "value" in d) Object.defineProperty(out, "message", { value: String(d.value), writable: true, configurable: true });
  const stack = v.stack;
  if (typeof stack === "string") Object.defineProperty(out, "stack", { value: stack, writable: true, configurable: true });
  const cause = Object.getOwnPropertyDescriptor(v, "cause");
  if (cause && "value" in cause) Object.defineProperty(out, "cause", { value: clone(cause.value, memory), writable: true, configurable: true });
  return out;
}
const ERROR_CTORS = { __proto__: null, Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
