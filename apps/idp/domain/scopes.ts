/** Scope strings (RFC 6749 §3.3): space-separated scope-tokens. */

export const scopeList = (scope: string) => scope.split(" ").filter((s) => s !== "");
/** RFC 6749 §3.3 scope-token: printable ASCII but space, `"` and `\` (so no tab hides `openid` inside one token). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
export const isScopeToken = (token: string) => SCOPE_TOKEN.test(token);
export const hasScope = (scope: string, name: string) => scopeList(scope).includes(name);
