/**
 * The JWT bearer grant (RFC 7523 §2.1): a client presents a JWT from an issuer the configuration
 * trusts (IDP_JWT_BEARER_ISSUERS, --jwt-bearer-issuers) and gets an access token for the
 * assertion's subject. Each trusted issuer names its keys (`jwks` inline, or `jwks_uri` on
 * loopback), the audiences its assertions may carry (default: this provider's issuer and token
 * endpoint) and which claim names the subject (default `sub`).
 */
import type { JWTPayload } from "jose";
import { CLIENT_ASYMMETRIC_ALGS } from "./algorithms.ts";
import { ForeignJwtError, isUsableJti, MAX_JTI_LENGTH, typMediaType, verifyForeignJwt } from "./client-keys.ts";
import { OAuthError } from "./errors.ts";
import type { Provider } from "./provider.ts";
import { loadJose } from "#lib/oauth";

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** How far ahead an assertion's `exp` may be (RFC 7523 §3: the server may bound it). */
const MAX_GRANT_ASSERTION_LIFETIME_S = 3600;

const invalidGrant = (description: string) => new OAuthError("invalid_grant", description);

/**
 * The subject of a valid assertion, or `invalid_grant`: not a JWT, an issuer not trusted, a bad
 * signature, a wrong audience, no or a passed `exp` (or one too far ahead), `nbf` ahead, or a
 * `jti` seen before (single use across instances, through the replay cache).
 */
const EXPLICIT_OTHER_TYPES = new Set(["at+jwt", "logout+jwt", "secevent+jwt", "oauth-authz-req+jwt", "token-introspection+jwt"]);

export async function verifyGrantAssertion(p: Provider, assertion: string, defaultAudiences: string[]): Promise<{ subject: string; claims: JWTPayload }> {
  const { decodeJwt, decodeProtectedHeader } = await loadJose();
  let iss: unknown;
  let typ: unknown;
  try {
    iss = decodeJwt(assertion).iss;
    typ = decodeProtectedHeader(assertion).typ;
  } catch {
    throw invalidGrant("assertion is not a JWT");
  }
  // Tokens typed for another purpose (RFC 8725 §3.11) are never assertions, even from a trusted
  // issuer: an access token or a logout token of a provider that trusts itself would otherwise
  // become a token for any client.
  if (EXPLICIT_OTHER_TYPES.has(typMediaType(typ) ?? "")) {
    throw invalidGrant(`assertion: a JWT of typ "${String(typ).slice(0, 40)}" is not an authorization grant`);
  }
  const trusted = (p.options.jwtBearerIssuers ?? []).find((i) => i.issuer === iss);
  if (!trusted) throw invalidGrant(`assertion issuer ${typeof iss === "string" ? `"${iss.slice(0, 200)}" ` : ""}is not trusted`);
  const now = p.now();
  let payload: JWTPayload;
  try {
    ({ payload } = await verifyForeignJwt(assertion, trusted, {
      algorithms: CLIENT_ASYMMETRIC_ALGS,
      now,
      issuer: trusted.issuer,
      audience: trusted.audiences ?? defaultAudiences,
      requiredClaims: ["exp"],
    }));
  } catch (err) {
    if (err instanceof ForeignJwtError) throw invalidGrant(`assertion: ${err.message}`);
    throw err;
  }
  if (payload.exp! * 1000 > now + MAX_GRANT_ASSERTION_LIFETIME_S * 1000) {
    throw invalidGrant(`assertion: exp is more than ${MAX_GRANT_ASSERTION_LIFETIME_S} seconds ahead`);
  }
  const subject = payload[trusted.subject_claim ?? "sub"];
  if (typeof subject !== "string" || subject === "" || subject.length > 256) {
    throw invalidGrant(`assertion has no usable ${trusted.subject_claim ?? "sub"} claim`);
  }
  if (payload.jti !== undefined) {
    if (!isUsableJti(payload.jti)) throw invalidGrant(`assertion: jti must be a string of 1 to ${MAX_JTI_LENGTH} characters`);
    const key = `jwt_bearer:${trusted.issuer}:${payload.jti}`;
    const expiresAt = payload.exp! * 1000;
    // Spent for the whole provider (at its root issuer), not per issuer by path: an assertion for
    // configured `audiences` is accepted at every issuer, and is still used once.
    if (!(await p.root.add("replay", key, { expires_at: expiresAt }, { pruneAt: expiresAt }))) throw invalidGrant("assertion: jti was already used");
  }
  return { subject, claims: payload };
}
