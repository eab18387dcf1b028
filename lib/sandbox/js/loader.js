// @ts-check
/**
 * Sandbox-side helpers for per-evaluation globals and CommonJS files (runs inside QuickJS;
 * embedded by scripts/embed-sandbox-js.mjs, loaded by lib/sandbox/bootstrap.ts). Compiled on
 * first use: they would add ~30% to sandbox creation. Returns
 * `[swapGlobal, restoreGlobal, makeRequire, newModule]`.
 */
(
  /** @param {import("./intrinsics").Intrinsics} I The built-ins bootstrap.js captured. */
  function (I) {
    "use strict";
    const { getDesc: gd, defineProp, create, assign, req } = I;
    const hasOwn = I.uncurry(I.hasOwnProperty);
    /**
     * @param {string} name
     * @param {unknown} value
     */
    const define = (name, value) =>
      defineProp(globalThis, name, /** @type {PropertyDescriptor} */ ({ __proto__: null, value, writable: true, configurable: true, enumerable: false }));
    // Per-evaluation globals (run-file args/env): define, and put back what was there afterwards.
    /**
     * @param {string} name
     * @param {unknown} value
     * @returns {PropertyDescriptor | undefined} What was there (a null-prototype copy).
     */
    function swapGlobal(name, value) {
      const d = gd(globalThis, name);
      if (d === undefined || d.configurable) define(name, value);
      else if (hasOwn(d, "value") && d.writable) /** @type {any} */ (globalThis)[name] = value;
      else throw new TypeError("cannot define the global '" + name + "': it exists and is not configurable");
      return d === undefined ? undefined : assign(create(null), d);
    }
    /**
     * @param {string} name
     * @param {PropertyDescriptor | undefined} d What `swapGlobal` returned.
     */
    function restoreGlobal(name, d) {
      const cur = gd(globalThis, name);
      if (d === undefined) { if (cur === undefined || cur.configurable) delete /** @type {any} */ (globalThis)[name]; }
      else if (cur === undefined || cur.configurable) defineProp(globalThis, name, d);
      else if (hasOwn(d, "value") && hasOwn(cur, "value") && cur.writable) /** @type {any} */ (globalThis)[name] = d.value;
    }
    // CommonJS: each file gets a require that resolves relative to itself.
    /** @param {string} file */
    const makeRequire = (file) =>
      function require(/** @type {string} */ spec) {
        return req(spec, file);
      };
    /** @param {string} file */
    const newModule = (file) => ({ exports: {}, id: file, filename: file });
    return [swapGlobal, restoreGlobal, makeRequire, newModule];
  }
);
