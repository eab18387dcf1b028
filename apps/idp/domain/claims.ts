/**
 * The user's claims, shared by the ID token and userinfo: base claims, then helper fields, then
 * raw extra claims (which override helpers of the same name), then `omit_claims` removals, then
 * the claims typed on the login page for the session (which override all of these).
 */
import { CodedError } from "#lib/errors";
import { JsonDepthError, parseJsonBounded } from "#lib/http";
import type { Scenario } from "./scenarios.ts";
import { syntheticEmail, syntheticName } from "./users.ts";

/** Claims a scenario can never override or omit: they belong to the protocol. */
const PROTOCOL_CLAIMS = new Set(["sub", "iss", "aud", "exp", "iat", "nbf", "auth_time", "nonce", "at_hash", "azp", "jti"]);

export interface User {
  login: string;
  sub: string;
  password?: string;
  scenario?: Scenario;
  /** Claims given at login for this session (parseLoginClaims). */
  claims?: LoginClaims;
}

export type LoginClaims = Record<string, unknown>;

/** `mapped`: claims from configuration (claim-mappings.ts), after the user's own, before those typed at login. */
export function userClaims(user: User, mapped?: Record<string, unknown>): Record<string, unknown> {
  const s = user.scenario;
  const claims: Record<string, unknown> = {
    sub: user.sub,
    email: s?.email ?? syntheticEmail(user.login),
    email_verified: s?.email_verified ?? true,
    name: s?.name ?? syntheticName(user.login),
  };
  if (!s) return withLoginClaims(withMapped(claims, mapped), user);
  if (s.groups !== undefined) claims.groups = s.groups;
  if (s.roles !== undefined) claims.roles = s.roles;
  if (s.tenant !== undefined) claims.tenant = s.tenant;
  if (s.preferred_username !== undefined) claims.preferred_username = s.preferred_username;
  if (s.locale !== undefined) claims.locale = s.locale;
  // The token's own claims (cnf, sid, act, ...) as well: a user's claims must not bind a bearer
  // token to a key or name another session or actor.
  for (const [k, v] of Object.entries(s.claims)) if (!RESERVED_LOGIN_CLAIMS.has(k)) claims[k] = v;
  for (const k of s.omit_claims) if (!RESERVED_LOGIN_CLAIMS.has(k)) delete claims[k];
  return withLoginClaims(withMapped(claims, mapped), user);
}

function withMapped(claims: Record<string, unknown>, mapped: Record<string, unknown> | undefined): Record<string, unknown> {
  return mapped ? Object.assign(claims, mapped) : claims;
}

function withLoginClaims(claims: Record<string, unknown>, user: User): Record<string, unknown> {
  if (user.claims) { for (const [k, v] of Object.entries(user.claims)) if (!RESERVED_LOGIN_CLAIMS.has(k)) claims[k] = v; }
  return claims;
}

/** Longest claims text the login page takes (UTF-8 bytes of the JSON). */
export const LOGIN_CLAIMS_MAX_BYTES = 4096;

/**
 * Claims a login may not set: the protocol's, and those of tokens and logout (`cnf`, `client_id`,
 * `scope`, `sid`, token exchange's `act` and `may_act`, ...): a login can shape the user, never
 * the token.
 */
export const RESERVED_LOGIN_CLAIMS = new Set([...PROTOCOL_CLAIMS, "cnf", "client_id", "scope", "sid", "c_hash", "s_hash", "act", "may_act", "events"]);

export type LoginClaimsErrorCode = "INVALID_LOGIN_CLAIMS";

export class LoginClaimsError extends CodedError<LoginClaimsErrorCode> {
  constructor(message: string) {
    super("INVALID_LOGIN_CLAIMS", message);
  }
}

/**
 * The extra claims typed on the login page: a JSON object of at most LOGIN_CLAIMS_MAX_BYTES,
 * nested no deeper than the JSON limit (lib/http/json-limits.ts), without reserved names.
 * Blank text is none (undefined). Anything else is a LoginClaimsError saying what is wrong.
 */
export function parseLoginClaims(text: string): LoginClaims | undefined {
  if (text.trim() === "") return undefined;
  // A string never has more UTF-16 units than UTF-8 bytes: a long one is refused before encoding.
  if (text.length > LOGIN_CLAIMS_MAX_BYTES || new TextEncoder().encode(text).length > LOGIN_CLAIMS_MAX_BYTES) {
    throw new LoginClaimsError(`extra claims are longer than ${LOGIN_CLAIMS_MAX_BYTES} bytes`);
  }
  let value: unknown;
  try {
    value = parseJsonBounded(text);
  } catch (err) {
    if (err instanceof JsonDepthError) throw new LoginClaimsError(`extra claims: ${err.message}`);
    throw new LoginClaimsError(`extra claims are not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new LoginClaimsError('extra claims must be a JSON object, such as {"roles": ["admin"]}');
  }
  const reserved = Object.keys(value).filter((k) => RESERVED_LOGIN_CLAIMS.has(k) || k === "__proto__");
  if (reserved.length > 0) throw new LoginClaimsError(`extra claims cannot set ${reserved.join(", ")}: the provider sets these`);
  return value as LoginClaims;
}

/** The names a client may see, for discovery's `claims_supported`. */
export const SUPPORTED_CLAIMS = [
  "sub",
  "iss",
  "aud",
  "exp",
  "iat",
  "auth_time",
  "nonce",
  "at_hash",
  "acr",
  "amr",
  "sid",
  "email",
  "email_verified",
  "name",
  "groups",
  "roles",
  "tenant",
  "preferred_username",
  "locale",
];
