/**
 * The `httpmod` module as the sandbox sees it: plain JavaScript (js/httpmod.js) evaluated inside QuickJS, once
 * per sandbox, when the script first calls `require("httpmod")` (the host's SourceResolver serves
 * it under HTTPMOD_FILE). It only builds data: every registration crosses to the host through the
 * native module `httpmod:host` as a copied plain object, and the host compiles and validates it
 * (core/plan.ts). Handlers stay in the sandbox; the host calls them through the global
 * dispatcher this module defines.
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
/** The global function the host calls for each request (defined non-writable by the module). */
export const DISPATCH_GLOBAL = "__httpmod_dispatch";
/** The native module carrying registrations and responses to the host. */
export const HOST_MODULE = "httpmod:host";
/**
 * The content types of a compact answer, by code: the dispatcher answers status 200 with no
 * header but one of these (index 0: none) and a string body as the character `\x01` + code
 * (`\x05` + code when the handler read `request.session`) followed by the body.
 */
export const COMPACT_TYPES = ["", "text/plain; charset=utf-8", "text/html; charset=utf-8", "application/json"] as const;

/** The module's source: apps/routes/script/js/httpmod.js, type-checked, embedded at build time
 * (scripts/embed-sandbox-js.mjs). It spells the names above as literals (httpmod-source.test.ts). */
export { HTTPMOD_SOURCE } from "./httpmod.generated.ts";
