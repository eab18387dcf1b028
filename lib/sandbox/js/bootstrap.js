// @ts-check
/**
 * Sandbox-side bootstrap (runs inside QuickJS; embedded by scripts/embed-sandbox-js.mjs, loaded by
 * lib/sandbox/bootstrap.ts). Runs once, before the first sandboxed code: small on purpose
 * (sandbox creation and first use are hot paths). It captures the built-ins the helpers use
 * BEFORE any sandboxed code runs, installs `console` and `require`, and returns
 * `[intrinsics, fromHostJson, fromHostBytes, defineGlobal]`. Console methods load the formatting
 * helpers (prelude.js) through the host `load` on first use. Descriptors are null-prototype
 * objects, so a polluted `Object.prototype` (a `get` or `value` there) cannot change what they
 * mean.
 *
 * The file is one function expression: its completion value is what the host calls.
 */
(
  /**
   * @param {(level: number, text: string) => void} emit The host console sink (throws past a limit).
   * @param {boolean} captureConsole false: console methods are no-ops.
   * @param {(intrinsics: import("./intrinsics").Intrinsics) => (args: ArrayLike<unknown>) => string} load
   *   Loads prelude.js and returns its `format`.
   * @param {import("./intrinsics").Require} req The native-module `require`.
   * @param {(chunk: string, api: object) => Record<string, unknown>} loadWeb Evaluates a chunk of
   *   the web globals (lib/sandbox/web.ts) and returns its exports.
   * @param {string} webGlobals The web globals and their chunks: "name chunk name chunk ...".
   */
  function (emit, captureConsole, load, req, loadWeb, webGlobals) {
    "use strict";
    const O = Object, FP = Function.prototype, AP = Array.prototype, SP = String.prototype;
    const gd = O.getOwnPropertyDescriptor, TA = O.getPrototypeOf(Uint8Array.prototype);
    const JSONp = JSON.parse, U8 = Uint8Array, defineProp = O.defineProperty;
    // The getters below exist on the engine's own prototypes: the casts only say so.
    /** @type {import("./intrinsics").Intrinsics} */
    const I = {
      O,
      S: String,
      N: Number,
      JSONs: JSON.stringify,
      uncurry: /** @type {import("./intrinsics").Uncurry} */ (FP.bind.bind(FP.call)),
      ownKeys: Reflect.ownKeys,
      getDesc: gd,
      getProto: O.getPrototypeOf,
      objProto: O.prototype,
      errProto: Error.prototype,
      objToString: O.prototype.toString,
      fnToString: FP.toString,
      isArray: Array.isArray,
      join: AP.join,
      push: AP.push,
      pop: AP.pop,
      aIndexOf: AP.indexOf,
      slice: SP.slice,
      replace: /** @type {import("./intrinsics").Intrinsics["replace"]} */ (SP.replace),
      sIndexOf: SP.indexOf,
      test: RegExp.prototype.test,
      reStr: RegExp.prototype.toString,
      symStr: Symbol.prototype.toString,
      dateIso: Date.prototype.toISOString,
      mapEntries: Map.prototype.entries,
      mapSize: /** @type {any} */ (gd(Map.prototype, "size")).get,
      setValues: Set.prototype.values,
      setSize: /** @type {any} */ (gd(Set.prototype, "size")).get,
      isView: ArrayBuffer.isView,
      abSlice: ArrayBuffer.prototype.slice,
      taTag: /** @type {any} */ (gd(TA, Symbol.toStringTag)).get,
      taLength: /** @type {any} */ (gd(TA, "length")).get,
      abByteLength: /** @type {any} */ (gd(ArrayBuffer.prototype, "byteLength")).get,
      TypeErr: TypeError,
      PromiseC: Promise,
      parseInt: Number.parseInt,
      parseFloat: Number.parseFloat,
      defineProp,
      create: O.create,
      assign: O.assign,
      hasOwnProperty: O.prototype.hasOwnProperty,
      req,
    };
    /**
     * @param {string} name
     * @param {unknown} value
     * @param {boolean} enumerable
     */
    function defineGlobal(name, value, enumerable) {
      defineProp(globalThis, name, /** @type {PropertyDescriptor} */ ({ __proto__: null, value, writable: true, configurable: true, enumerable }));
    }
    /** @type {((args: ArrayLike<unknown>) => string) | undefined} */
    let format;
    /** @type {(level: number) => (...args: unknown[]) => void} */
    const mk = captureConsole
      ? (level) =>
        function () {
          emit(level, (format || (format = load(I)))(arguments));
        }
      : () => function () {};
    /** @type {Record<string, (...args: any[]) => void>} */
    const con = { log: mk(0), info: mk(1), warn: mk(2), error: mk(3), debug: mk(4), trace: mk(4), dir: mk(0) };
    con.assert = captureConsole
      ? function (ok, ...rest) {
        if (!ok) emit(3, "Assertion failed" + (rest.length ? ": " + (format || (format = load(I)))(rest) : ""));
      }
      : function () {};
    defineGlobal("console", con, false);
    defineGlobal("require", req, false);
    // The web globals, installed lazily (web.ts): a getter per name loads its chunk on first read
    // and replaces itself with the value. This runs before every sandbox's first evaluation, so
    // it is as little as can be: bound functions (nothing more to compile), one descriptor
    // object, and the chunks' `api` (how they reach each other, never through globals the
    // sandbox may have replaced) made only when a chunk first loads.
    /** @type {{ chunk(c: string): Record<string, unknown>, report(e: unknown): void } | undefined} */
    let api;
    /**
     * @param {string} name
     * @param {string} chunk
     */
    function lazyGet(name, chunk) {
      if (!api) {
        /** @type {Record<string, Record<string, unknown>>} */
        const chunks = /** @type {any} */ ({ __proto__: null });
        const a = {
          __proto__: null,
          chunk: (/** @type {string} */ c) => chunks[c] || (chunks[c] = loadWeb(c, a)),
          report: (/** @type {unknown} */ e) => /** @type {(...args: unknown[]) => void} */ (con.error)("Uncaught", e),
        };
        api = a;
      }
      const v = api.chunk(chunk)[name];
      defineGlobal(name, v, false);
      return v;
    }
    /**
     * @param {string} name
     * @param {unknown} v
     */
    function lazySet(name, v) {
      defineGlobal(name, v, false);
    }
    const web = webGlobals ? webGlobals.split(" ") : [];
    /** @type {PropertyDescriptor & { __proto__: null }} */
    const lazy = { __proto__: null, get: undefined, set: undefined, configurable: true };
    for (let i = 0; i < web.length; i += 2) {
      const name = /** @type {string} */ (web[i]);
      lazy.get = lazyGet.bind(null, name, /** @type {string} */ (web[i + 1]));
      lazy.set = lazySet.bind(null, name);
      defineProp(globalThis, name, lazy);
    }
    return [I, (/** @type {string} */ s) => JSONp(s), (/** @type {ArrayBuffer} */ buf) => new U8(buf), defineGlobal];
  }
);
