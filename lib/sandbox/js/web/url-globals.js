/** What the URL chunk's code takes from the global scope, taken from the web globals instead (a
 * sandbox may have replaced the globals). Injected by scripts/embed-sandbox-js.mjs. */
/* global __web */
export const TextEncoder = __web.chunk("core").TextEncoder;
export const TextDecoder = __web.chunk("core").TextDecoder;
