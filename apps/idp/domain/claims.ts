/**
 * The user's claims, shared by the ID token and userinfo: base claims, then helper fields, then
 * raw extra claims (which override helpers of the same name), then `omit_claims` removals.
 */
import type { Scenario } from "./scenarios.ts";
import { syntheticEmail, syntheticName } from "./users.ts";

/** Claims a scenario can never override or omit: they belong to the protocol. */
export const PROTOCOL_CLAIMS = new Set(["sub", "iss", "aud", "exp", "iat", "nbf", "auth_time", "nonce", "at_hash", "azp", "jti"]);

export interface User {
  login: string;
  sub: string;
  password?: string;
  scenario?: Scenario;
}

export function userClaims(user: User): Record<string, unknown> {
  const s = user.scenario;
  const claims: Record<string, unknown> = {
    sub: user.sub,
    email: s?.email ?? syntheticEmail(user.login),
    email_verified: s?.email_verified ?? true,
    name: s?.name ?? syntheticName(user.login),
  };
  if (!s) return claims;
  if (s.groups !== undefined) claims.groups = s.groups;
  if (s.roles !== undefined) claims.roles = s.roles;
  if (s.tenant !== undefined) claims.tenant = s.tenant;
  if (s.preferred_username !== undefined) claims.preferred_username = s.preferred_username;
  if (s.locale !== undefined) claims.locale = s.locale;
  for (const [k, v] of Object.entries(s.claims)) if (!PROTOCOL_CLAIMS.has(k)) claims[k] = v;
  for (const k of s.omit_claims) if (!PROTOCOL_CLAIMS.has(k)) delete claims[k];
  return claims;
}

/** The names a client may see, for discovery's `claims_supported`. */
export const SUPPORTED_CLAIMS = [
  "sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "at_hash",
  "email", "email_verified", "name", "groups", "roles", "tenant", "preferred_username", "locale",
];
