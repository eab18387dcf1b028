/**
 * The `httpmod` module as the sandbox sees it: plain JavaScript (js/httpmod.js) evaluated inside
 * QuickJS, once per sandbox, when the script first calls `require("httpmod")` (the host's
 * SourceResolver serves it under HTTPMOD_FILE). This file is read where script-sandbox.ts
 * installs the module: a request thread, or the serving thread in process. It only builds data: every registration crosses to the host through the
 * native module `httpmod:host` as a copied plain object, and the host compiles and validates it
 * (core/plan.ts). Handlers stay in the sandbox; the host calls them through the global
 * dispatcher this module defines (its name and what crosses through it: script-wire.ts).
 *
 * The host module answers only the caller that claimed it first (this module, when it loads), so
 * a script cannot register, mount or respond around the builder by requiring it itself.
 *
 * Values the module makes (`user()`, `resource()`, the builder stages) are frozen and recorded in
 * a WeakSet inside this closure, so a look-alike plain object is refused by `.auth` and
 * `.resource`. Each builder step returns a new frozen stage: `.handle` exists on the Ready stage
 * only, so calling it earlier is a TypeError ("... .handle is not a function before the route's
 * plan is declared: use ...").
 */

/** The canonical name of the module's file; script files may not use the `/.host/` directory. */
export const HTTPMOD_FILE = "/.host/httpmod.js";
/** The native module carrying registrations and responses to the host. */
export const HOST_MODULE = "httpmod:host";

/** The module's source: apps/routes/script/js/httpmod.js, type-checked, embedded at build time
 * (scripts/embed-sandbox-js.mjs). It spells the names above as literals (httpmod-source.test.ts),
 * and script-wire.ts's (script-wire.test.ts). */
export { HTTPMOD_SOURCE } from "./httpmod.generated.ts";
