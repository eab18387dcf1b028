/**
 * TextEncoder and TextDecoder (Encoding Standard, UTF-8 only), atob and btoa (HTML's
 * forgiving-base64).
 */
import { DOMException } from "./dom-exception.js";

const fromCharCode = String.fromCharCode;
const CHUNK = 8192;

/** UTF-8 bytes of `s`, lone surrogates as U+FFFD. */
function utf8(s) {
  const n = s.length;
  const out = new Uint8Array(n * 3);
  let j = 0;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[j++] = c;
      continue;
    }
    if (c < 0x800) {
      out[j++] = 0xc0 | (c >> 6);
      out[j++] = 0x80 | (c & 63);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        out[j++] = 0xf0 | (c >> 18);
        out[j++] = 0x80 | ((c >> 12) & 63);
        out[j++] = 0x80 | ((c >> 6) & 63);
        out[j++] = 0x80 | (c & 63);
        continue;
      }
      c = 0xfffd;
    }
    out[j++] = 0xe0 | (c >> 12);
    out[j++] = 0x80 | ((c >> 6) & 63);
    out[j++] = 0x80 | (c & 63);
  }
  return out.slice(0, j);
}

export class TextEncoder {
  get encoding() {
    return "utf-8";
  }
  encode(input = "") {
    return utf8(String(input));
  }
  encodeInto(source, destination) {
    if (!(destination instanceof Uint8Array)) throw new TypeError("Failed to execute 'encodeInto' on 'TextEncoder': parameter 2 is not of type 'Uint8Array'.");
    const s = String(source);
    const cap = destination.length;
    let read = 0, written = 0;
    for (let i = 0; i < s.length;) {
      const cp = s.codePointAt(i);
      const units = cp > 0xffff ? 2 : 1;
      const c = cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp;
      const len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      if (written + len > cap) break;
      if (len === 1) destination[written] = c;
      else if (len === 2) {
        destination[written] = 0xc0 | (c >> 6);
        destination[written + 1] = 0x80 | (c & 63);
      } else if (len === 3) {
        destination[written] = 0xe0 | (c >> 12);
        destination[written + 1] = 0x80 | ((c >> 6) & 63);
        destination[written + 2] = 0x80 | (c & 63);
      } else {
        destination[written] = 0xf0 | (c >> 18);
        destination[written + 1] = 0x80 | ((c >> 12) & 63);
        destination[written + 2] = 0x80 | ((c >> 6) & 63);
        destination[written + 3] = 0x80 | (c & 63);
      }
      written += len;
      read += units;
      i += units;
    }
    return { read, written };
  }
}
Object.defineProperty(TextEncoder.prototype, Symbol.toStringTag, { value: "TextEncoder", configurable: true });

const UTF8_LABELS = ["unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"];
const decoders = new WeakMap();
function decoderState(self) {
  const s = decoders.get(self);
  if (!s) throw new TypeError("Illegal invocation");
  return s;
}

/** Bytes of a BufferSource, as a Uint8Array view (not a copy). */
export function bytesOf(input, what) {
  if (input instanceof Uint8Array) return input;
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  const tag = Object.prototype.toString.call(input);
  if (tag === "[object ArrayBuffer]" || tag === "[object SharedArrayBuffer]") return new Uint8Array(input);
  throw new TypeError(what + ": The provided value is not of type '(ArrayBuffer or ArrayBufferView)'.");
}

export class TextDecoder {
  constructor(label = "utf-8", options = undefined) {
    const l = String(label).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "").toLowerCase();
    if (UTF8_LABELS.indexOf(l) < 0) {
      throw new RangeError(
        "Failed to construct 'TextDecoder': The encoding label provided ('" + label + "') is invalid or not supported here (only UTF-8 is).",
      );
    }
    const o = options == null ? {} : options;
    // need: bytes still expected in the current sequence; cp: its value so far; seen: bytes of it; lower/upper: next byte's bounds
    decoders.set(this, { fatal: !!o.fatal, ignoreBOM: !!o.ignoreBOM, bomSeen: false, need: 0, cp: 0, seen: 0, lower: 0x80, upper: 0xbf });
  }
  get encoding() {
    decoderState(this);
    return "utf-8";
  }
  get fatal() {
    return decoderState(this).fatal;
  }
  get ignoreBOM() {
    return decoderState(this).ignoreBOM;
  }
  decode(input = undefined, options = undefined) {
    const st = decoderState(this);
    const bytes = input === undefined ? new Uint8Array(0) : bytesOf(input, "Failed to execute 'decode' on 'TextDecoder'");
    const stream = !!(options != null && options.stream);
    const units = [];
    let out = "";
    const flush = () => {
      out += fromCharCode.apply(null, units);
      units.length = 0;
    };
    const emit = (cp) => {
      if (cp > 0xffff) {
        cp -= 0x10000;
        units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      } else units.push(cp);
      if (units.length >= CHUNK) flush();
    };
    const error = () => {
      if (st.fatal) {
        st.need = st.cp = st.seen = 0;
        st.lower = 0x80;
        st.upper = 0xbf;
        st.bomSeen = false;
        throw new TypeError("Failed to execute 'decode' on 'TextDecoder': The encoded data was not valid.");
      }
      emit(0xfffd);
    };
    // The Encoding Standard's UTF-8 decoder, byte by byte.
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (st.need === 0) {
        if (b <= 0x7f) emit(b);
        else if (b >= 0xc2 && b <= 0xdf) {
          st.need = 1;
          st.cp = b & 0x1f;
        } else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) st.lower = 0xa0;
          if (b === 0xed) st.upper = 0x9f;
          st.need = 2;
          st.cp = b & 0xf;
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) st.lower = 0x90;
          if (b === 0xf4) st.upper = 0x8f;
          st.need = 3;
          st.cp = b & 0x7;
        } else error();
        continue;
      }
      if (b < st.lower || b > st.upper) {
        st.need = st.cp = st.seen = 0;
        st.lower = 0x80;
        st.upper = 0xbf;
        i--; // the byte is processed again as a new sequence
        error();
        continue;
      }
      st.lower = 0x80;
      st.upper = 0xbf;
      st.cp = (st.cp << 6) | (b & 0x3f);
      if (++st.seen === st.need) {
        const cp = st.cp;
        st.need = st.cp = st.seen = 0;
        emit(cp);
      }
    }
    if (!stream && st.need !== 0) {
      st.need = st.cp = st.seen = 0;
      st.lower = 0x80;
      st.upper = 0xbf;
      error();
    }
    flush();
    // BOM handling: only at the very start of a stream.
    if (!st.ignoreBOM && !st.bomSeen && out.length > 0) {
      st.bomSeen = true;
      if (out.charCodeAt(0) === 0xfeff) out = out.slice(1);
    }
    if (!stream) {
      st.bomSeen = false;
    }
    return out;
  }
}
Object.defineProperty(TextDecoder.prototype, Symbol.toStringTag, { value: "TextDecoder", configurable: true });

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DECODE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

function invalid(message) {
  return new DOMException(message, "InvalidCharacterError");
}

export function btoa(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'btoa': 1 argument required, but only 0 present.");
  const s = String(data);
  let out = "";
  for (let i = 0; i < s.length; i += 3) {
    const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
    if (a > 255 || b > 255 || c > 255) throw invalid("Failed to execute 'btoa': The string to be encoded contains characters outside of the Latin1 range.");
    const n = (a << 16) | ((b || 0) << 8) | (c || 0);
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + (i + 1 < s.length ? ALPHABET[(n >> 6) & 63] : "=") + (i + 2 < s.length ? ALPHABET[n & 63] : "=");
  }
  return out;
}

/** Forgiving-base64 decode (HTML Standard); null on failure. */
export function forgivingBase64(input) {
  let s = String(input).replace(/[\t\n\f\r ]/g, "");
  if (s.length % 4 === 0) s = s.replace(/==?$/, "");
  if (s.length % 4 === 1) return null;
  let out = "", buffer = 0, bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? DECODE[c] : -1;
    if (v < 0) return null;
    buffer = (buffer << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += fromCharCode((buffer >> bits) & 0xff);
    }
  }
  return out;
}

export function atob(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'atob': 1 argument required, but only 0 present.");
  const out = forgivingBase64(data);
  if (out === null) throw invalid("Failed to execute 'atob': The string to be decoded is not correctly encoded.");
  return out;
}
