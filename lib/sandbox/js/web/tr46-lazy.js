/**
 * tr46's interface for whatwg-url without its tables in the URL chunk. A host that is ASCII and
 * has no `xn--` label needs none of UTS #46's mapping beyond lower-casing: every ASCII code point
 * is valid when UseSTD3ASCIIRules is off, bidi and joiner rules concern non-ASCII code points
 * only, and `xn--` labels (Punycode) take the full path. Everything else loads the idna chunk.
 */
/* global __web */
// deno-lint-ignore no-control-regex
const NEEDS_TABLES = /[^\x00-\x7f]|(^|\.)xn--/i;

export function toASCII(domain, options) {
  if (!options.useSTD3ASCIIRules && !options.verifyDNSLength && !options.checkHyphens && !NEEDS_TABLES.test(domain)) return domain.toLowerCase();
  return __web.chunk("idna").toASCII(domain, options);
}

export function toUnicode(domain, options) {
  return __web.chunk("idna").toUnicode(domain, options);
}
