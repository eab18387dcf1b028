/**
 * URL and URLSearchParams: the reference implementation (whatwg-url, the one jsdom uses), bundled
 * by scripts/embed-sandbox-js.mjs with `tr46` replaced by ./tr46-lazy.js (the IDNA tables load
 * only for hosts that need them) and the legacy-encoding part of @exodus/bytes by
 * ./percent-encode-utf8.js (URLs in scripts are always UTF-8).
 */
export { URL, URLSearchParams } from "whatwg-url";
