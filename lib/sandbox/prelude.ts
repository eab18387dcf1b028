/**
 * Sandbox-side code (runs inside QuickJS). It lives in ./js/ as type-checked JavaScript
 * (bootstrap.js, prelude.js, loader.js; see their headers) and reaches the host as strings
 * embedded by scripts/embed-sandbox-js.mjs in prelude.generated.ts, so every runtime imports
 * plain TypeScript.
 */
export { BOOTSTRAP_SOURCE, LOADER_SOURCE, PRELUDE_SOURCE } from "./prelude.generated.ts";

/** Console levels in the order the bootstrap numbers them (its `mk(0)` ... `mk(4)`). */
export const CONSOLE_LEVELS = ["log", "info", "warn", "error", "debug"] as const;
export type ConsoleLevel = (typeof CONSOLE_LEVELS)[number];
