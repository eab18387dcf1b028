/**
 * `crypto` (Web Crypto): getRandomValues and randomUUID from the host's CSPRNG, and
 * subtle.digest (SHA-1, SHA-256, SHA-384, SHA-512) computed by the host's Web Crypto. Both reach
 * the host only through functions of the marshaller (copied bytes in, copied bytes out).
 */
import { DOMException } from "./dom-exception.js";
import { bytesOf } from "./encoding.js";

/** The standard's limit for one getRandomValues call. */
export const MAX_RANDOM_BYTES = 65536;
const INTEGER_ARRAYS = [
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "BigInt64Array",
  "BigUint64Array",
];
// The engine's own getters: a view's own properties (or a patched prototype) cannot change what
// is filled.
const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
const getter = (name) => Object.getOwnPropertyDescriptor(TypedArrayProto, name).get;
const typedTag = getter(Symbol.toStringTag), viewBuffer = getter("buffer"), viewOffset = getter("byteOffset"), viewLength = getter("byteLength");
const call = Function.prototype.call.bind(Function.prototype.call);
const DIGESTS = { __proto__: null, "sha-1": "SHA-1", "sha-256": "SHA-256", "sha-384": "SHA-384", "sha-512": "SHA-512" };

/**
 * @param {{ randomBytes(n: number): Uint8Array, digest(algorithm: string, data: Uint8Array): Promise<Uint8Array> }} host
 */
export function makeCrypto(host) {
  function getRandomValues(array) {
    if (arguments.length === 0) throw new TypeError("Failed to execute 'getRandomValues' on 'Crypto': 1 argument required, but only 0 present.");
    const name = ArrayBuffer.isView(array) ? call(typedTag, array) : undefined;
    if (!name || INTEGER_ARRAYS.indexOf(name) < 0) {
      throw new DOMException(
        "Failed to execute 'getRandomValues' on 'Crypto': The provided ArrayBufferView is of type '" + (name || "non-view") +
          "', which is not an integer array type.",
        "TypeMismatchError",
      );
    }
    const n = call(viewLength, array);
    if (n > MAX_RANDOM_BYTES) {
      throw new DOMException(
        "Failed to execute 'getRandomValues' on 'Crypto': The ArrayBufferView's byte length (" + n +
          ") exceeds the number of bytes of entropy available via this API (" + MAX_RANDOM_BYTES + ").",
        "QuotaExceededError",
      );
    }
    if (n > 0) new Uint8Array(call(viewBuffer, array), call(viewOffset, array), n).set(host.randomBytes(n));
    return array;
  }
  function randomUUID() {
    const b = new Uint8Array(16);
    getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let s = "";
    for (let i = 0; i < 16; i++) {
      s += (b[i] < 16 ? "0" : "") + b[i].toString(16);
      if (i === 3 || i === 5 || i === 7 || i === 9) s += "-";
    }
    return s;
  }
  const subtle = {
    digest(algorithm, data) {
      try {
        const name = typeof algorithm === "string" ? algorithm : algorithm != null ? algorithm.name : undefined;
        if (typeof name !== "string") throw new TypeError("Failed to execute 'digest' on 'SubtleCrypto': Algorithm: name: Missing or not a string");
        const alg = DIGESTS[name.toLowerCase()];
        if (!alg) throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
        const bytes = bytesOf(data, "Failed to execute 'digest' on 'SubtleCrypto': parameter 2");
        // a copy taken now: the caller may change its buffer before the promise settles
        const copy = new Uint8Array(bytes);
        return Promise.resolve(host.digest(alg, copy)).then((out) => out.buffer);
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
  Object.defineProperty(subtle, Symbol.toStringTag, { value: "SubtleCrypto", configurable: true });
  const crypto = { getRandomValues, randomUUID };
  Object.defineProperty(crypto, "subtle", { value: subtle, enumerable: true, configurable: true });
  Object.defineProperty(crypto, Symbol.toStringTag, { value: "Crypto", configurable: true });
  return crypto;
}
