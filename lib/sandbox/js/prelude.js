// @ts-check
/**
 * Sandbox-side formatting helpers (run inside QuickJS; embedded by scripts/embed-sandbox-js.mjs,
 * loaded by lib/sandbox/bootstrap.ts on first use). Formatting runs INSIDE QuickJS so a console
 * call or a value preview crosses the boundary as one string (one FFI call) instead of a walk
 * over handles. The built-ins it uses were captured by bootstrap.js before any sandboxed code
 * ran, so later monkey-patching by sandboxed code does not change how output is formatted.
 *
 * Format (documented in docs/sandbox.md): Node `util.inspect`-like, always on one line.
 * Top-level console strings are raw; nested strings are single-quoted; objects `{ x: 1 }`,
 * arrays `[ 1, 2 ]`, depth 2, at most 100 items, getters shown as `[Getter]` (never invoked).
 * Returns `[format, describe, describeError, toHost]`.
 */
(
  /**
   * @param {import("./intrinsics").Intrinsics} I The built-ins bootstrap.js captured.
   * @param {number} maxJson Longest `json` attached to a described value.
   */
  function (I, maxJson) {
    "use strict";
    const { S, N, JSONs, uncurry, ownKeys, getDesc, getProto, isArray, TypeErr, PromiseC, isView } = I;
    const tag = uncurry(I.objToString), fnSrc = uncurry(I.fnToString);
    const join = uncurry(I.join), push = uncurry(I.push), pop = uncurry(I.pop), aIndexOf = uncurry(I.aIndexOf);
    const slice = uncurry(I.slice), replace = uncurry(I.replace), sIndexOf = uncurry(I.sIndexOf), test = uncurry(I.test);
    const symStr = uncurry(I.symStr), dateIso = uncurry(I.dateIso), reStr = uncurry(I.reStr);
    const mapEntries = uncurry(I.mapEntries), mapSize = uncurry(I.mapSize), setValues = uncurry(I.setValues), setSize = uncurry(I.setSize);
    const abSlice = uncurry(I.abSlice), taTag = uncurry(I.taTag), taLength = uncurry(I.taLength), abByteLength = uncurry(I.abByteLength);
    const MAX_DEPTH = 2, MAX_ITEMS = 100, MAX_STR = 10000;
    const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
    // deno-lint-ignore no-control-regex
    const ESC = /['\\\n\r\t\u0000-\u001f\u007f]/g;
    /** @param {string} c */
    const escChar = (c) =>
      c === "'"
        ? "\\'"
        : c === "\\"
        ? "\\\\"
        : c === "\n"
        ? "\\n"
        : c === "\r"
        ? "\\r"
        : c === "\t"
        ? "\\t"
        : "\\x" + (c.charCodeAt(0) < 16 ? "0" : "") + c.charCodeAt(0).toString(16);
    /** @param {string} s */
    function quote(s) {
      let extra = "";
      if (s.length > MAX_STR) {
        extra = "... " + (s.length - MAX_STR) + " more characters";
        s = slice(s, 0, MAX_STR);
      }
      return "'" + replace(s, ESC, escChar) + "'" + extra;
    }
    /** @param {unknown} v */
    function isError(v) {
      if (tag(v) === "[object Error]") return true;
      // An error with a toStringTag of its own (DOMException): Error.prototype on its chain.
      let p = safe(() => getProto(v), null);
      for (let i = 0; p !== null && i < 64; i++) {
        if (p === I.errProto) return true;
        p = safe(() => getProto(p), null);
      }
      return false;
    }
    /**
     * @template T, F
     * @param {() => T} f
     * @param {F} fallback
     * @returns {T | F}
     */
    function safe(f, fallback) {
      try {
        return f();
      } catch {
        return fallback;
      }
    }
    /** @param {any} v */
    function fnName(v) {
      const d = safe(() => getDesc(v, "name"), undefined);
      return d && typeof d.value === "string" ? d.value : "";
    }
    /**
     * @param {any} v
     * @returns {string | null}
     */
    function ctorName(v) {
      let p = safe(() => getProto(v), null);
      while (p !== null) {
        const d = safe(() => getDesc(p, "constructor"), undefined);
        if (d && typeof d.value === "function") {
          const n = fnName(d.value);
          if (n) return n;
        }
        p = safe(() => getProto(p), null);
      }
      return null;
    }
    /** @param {any} v An Error. */
    function errorText(v) {
      const name = safe(() => S(v.name), "Error"), msg = safe(() => S(v.message), "");
      const stack = safe(() => v.stack, undefined);
      const head = msg ? name + ": " + msg : name;
      return typeof stack === "string" && stack ? head + "\n" + replace(stack, /\n$/, "") : head;
    }
    /** @param {string | symbol} k */
    function key(k) {
      return typeof k === "symbol" ? "[" + symStr(k) + "]" : test(IDENT, k) ? k : quote(k);
    }
    /**
     * @param {object} v
     * @param {number} depth
     * @param {unknown[]} seen
     * @param {string[]} out
     * @param {boolean} skipIndexes
     */
    function props(v, depth, seen, out, skipIndexes) {
      const keys = safe(() => ownKeys(v), []);
      let shown = 0;
      for (let i = 0; i < keys.length; i++) {
        const k = /** @type {string | symbol} */ (keys[i]);
        if (skipIndexes && typeof k === "string" && N(k) >>> 0 === N(k) && S(N(k)) === k) continue;
        const d = safe(() => getDesc(v, k), undefined);
        if (!d || !d.enumerable) continue;
        if (shown++ >= MAX_ITEMS) {
          push(out, "... more properties");
          break;
        }
        let s;
        if ("value" in d) s = inspect(d.value, depth + 1, seen, true);
        else s = d.get ? (d.set ? "[Getter/Setter]" : "[Getter]") : "[Setter]";
        push(out, key(k) + ": " + s);
      }
    }
    /**
     * @param {string} prefix
     * @param {string[]} items
     * @param {string} open
     * @param {string} close
     */
    function braces(prefix, items, open, close) {
      if (items.length === 0) return (prefix ? prefix + " " : "") + open + close;
      return (prefix ? prefix + " " : "") + open + " " + join(items, ", ") + " " + close;
    }
    /**
     * @param {any} v
     * @param {number} depth
     * @param {unknown[]} seen Objects being shown (cycles).
     * @param {boolean} nested Quote strings.
     * @returns {string}
     */
    function inspect(v, depth, seen, nested) {
      switch (typeof v) {
        case "string":
          return nested ? quote(v) : v;
        case "number":
          return v === 0 && 1 / v < 0 ? "-0" : S(v);
        case "bigint":
          return S(v) + "n";
        case "symbol":
          return symStr(v);
        case "undefined":
          return "undefined";
        case "boolean":
          return v ? "true" : "false";
        case "function": {
          const src = safe(() => fnSrc(v), "");
          const n = fnName(v);
          if (slice(src, 0, 5) === "class") return "[class " + (n || "(anonymous)") + "]";
          return "[Function: " + (n || "(anonymous)") + "]";
        }
      }
      if (v === null) return "null";
      if (aIndexOf(seen, v) >= 0) return "[Circular]";
      if (isError(v)) return errorText(v);
      const t = tag(v);
      if (t === "[object Date]") return safe(() => dateIso(v), "Invalid Date");
      if (t === "[object RegExp]") return safe(() => reStr(v), "/(regexp)/");
      if (v instanceof PromiseC) return "Promise { <unknown> }";
      const isArr = isArray(v);
      const name = ctorName(v);
      if (depth > MAX_DEPTH) return isArr ? "[Array]" : "[" + (name || "Object") + "]";
      push(seen, v);
      try {
        /** @type {string[]} */
        const out = [];
        if (isArr) {
          const len = safe(() => v.length, 0);
          const n = len < MAX_ITEMS ? len : MAX_ITEMS;
          for (let i = 0; i < n; i++) {
            const d = safe(() => getDesc(v, i), undefined);
            push(out, d === undefined ? "<empty>" : "value" in d ? inspect(d.value, depth + 1, seen, true) : "[Getter]");
          }
          if (len > MAX_ITEMS) push(out, "... " + (len - MAX_ITEMS) + " more items");
          props(v, depth, seen, out, true);
          return braces(name === "Array" ? "" : (name || "[Array: null prototype]") + "(" + len + ")", out, "[", "]");
        }
        if (isView(v) && !(t === "[object DataView]")) {
          const len = taLength(v), n = len < MAX_ITEMS ? len : MAX_ITEMS;
          for (let i = 0; i < n; i++) push(out, inspect(/** @type {any} */ (v)[i], depth + 1, seen, true));
          if (len > MAX_ITEMS) push(out, "... " + (len - MAX_ITEMS) + " more items");
          return braces(taTag(v) + "(" + len + ")", out, "[", "]");
        }
        if (t === "[object ArrayBuffer]") return "ArrayBuffer { byteLength: " + abByteLength(v) + " }";
        if (t === "[object Map]") {
          let i = 0;
          for (const [k, val] of mapEntries(v)) {
            if (i++ >= MAX_ITEMS) {
              push(out, "...");
              break;
            }
            push(out, inspect(k, depth + 1, seen, true) + " => " + inspect(val, depth + 1, seen, true));
          }
          return braces("Map(" + mapSize(v) + ")", out, "{", "}");
        }
        if (t === "[object Set]") {
          let i = 0;
          for (const val of setValues(v)) {
            if (i++ >= MAX_ITEMS) {
              push(out, "...");
              break;
            }
            push(out, inspect(val, depth + 1, seen, true));
          }
          return braces("Set(" + setSize(v) + ")", out, "{", "}");
        }
        props(v, depth, seen, out, false);
        const proto = safe(() => getProto(v), null);
        const prefix = proto === null ? "[Object: null prototype]" : name === "Object" ? "" : name || "";
        return braces(prefix, out, "{", "}");
      } finally {
        pop(seen);
      }
    }
    /** @param {unknown} v */
    function toInspect(v) {
      return safe(() => inspect(v, 0, [], true), "[uninspectable]");
    }
    /** @param {ArrayLike<unknown>} args A console call's arguments. */
    function format(args) {
      /** @type {string[]} */
      const out = [];
      let i = 0;
      if (typeof args[0] === "string" && args.length > 1 && sIndexOf(args[0], "%") >= 0) {
        i = 1;
        push(
          out,
          replace(args[0], /%[sdifjoOc%]/g, (m) => {
            if (m === "%%") return "%";
            if (i >= args.length) return m;
            const a = args[i++];
            // parseInt/parseFloat take any value (they convert it to a string): the casts say so.
            switch (m) {
              case "%s":
                return typeof a === "string" ? a : inspect(a, 1, [], true);
              case "%d":
              case "%i":
                return typeof a === "object" ? "NaN" : S(m === "%i" ? I.parseInt(/** @type {string} */ (a)) : N(a));
              case "%f":
                return S(I.parseFloat(/** @type {string} */ (a)));
              case "%j":
                return safe(() => JSONs(a), "[Circular]");
              case "%c":
                return "";
              default:
                return inspect(a, 0, [], true);
            }
          }),
        );
      }
      for (; i < args.length; i++) push(out, safe(() => inspect(args[i], 0, [], false), "[uninspectable]"));
      return join(out, " ");
    }
    /** @param {unknown} v */
    function typeName(v) {
      if (v === null) return "null";
      const t = typeof v;
      if (t !== "object") return t;
      if (isArray(v)) return "array";
      if (v instanceof PromiseC) return "promise";
      return "object";
    }
    // Results cross as JSON text (host strings are C strings: a raw NUL would cut them short).
    // describe: [type, preview, json?] with the value's own JSON embedded when short enough.
    /** @param {unknown} v */
    function describe(v) {
      const preview = toInspect(v);
      let json;
      try {
        json = JSONs(v);
      } catch {
        json = undefined;
      }
      const head = "[" + JSONs(typeName(v)) + "," + JSONs(preview);
      return typeof json === "string" && json.length <= maxJson ? head + "," + json + "]" : head + "]";
    }
    // describeError: [name, message, stack] with a V8-like stack ("Name: message\n    at ...").
    /** @param {any} e */
    function describeError(e) {
      if (e !== null && typeof e === "object" && isError(e)) {
        const name = safe(() => S(e.name), "Error"), msg = safe(() => S(e.message), "");
        const stack = safe(() => e.stack, "");
        return JSONs([name, msg, (msg ? name + ": " + msg : name) + (typeof stack === "string" && stack ? "\n" + replace(stack, /\n$/, "") : "")]);
      }
      const text = typeof e === "string" ? e : toInspect(e);
      return JSONs(["", text, "Uncaught " + text]);
    }
    /**
     * @param {any} v
     * @returns {string | ArrayBuffer}
     */
    function toHost(v) {
      if (isView(v)) return abSlice(v.buffer, v.byteOffset, v.byteOffset + v.byteLength);
      if (tag(v) === "[object ArrayBuffer]") return abSlice(v, 0);
      const j = JSONs(v);
      if (j === undefined) throw new TypeErr("cannot pass " + typeName(v) + " to the host");
      return j;
    }
    return [format, describe, describeError, toHost];
  }
);
