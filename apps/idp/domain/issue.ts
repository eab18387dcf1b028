/**
 * Issuing tokens: opaque access and refresh tokens (cheap random secrets kept in the state store)
 * and RS256 ID tokens with `at_hash`, shaped by the user's ID token scenario.
 */
import { idTokenAlg } from "./algorithms.ts";
import { type User, userClaims } from "./claims.ts";
import { type ClaimTarget, mappedClaims } from "./claim-mappings.ts";
import { type AuthContext, type ClaimsRequest, userinfoContextClaims } from "./claims-request.ts";
import { allowsGrant, type Client } from "./clients.ts";
import type { Provider } from "./provider.ts";
import { base64urlEncode } from "#lib/oauth";
import { OAuthError } from "./errors.ts";
import { sessionGrantId, sessionOfGrant } from "./grant-ids.ts";
import { type AccessTokenRecord, LIFETIME_MS, type RefreshTokenRecord, type RevokedGrantRecord } from "./records.ts";
import { hasScope } from "./scopes.ts";

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

interface Issuance extends AuthContext {
  issuer: string;
  client: Client;
  /** Absent for client_credentials. */
  user?: User;
  scope: string;
  nonce?: string;
  auth_time?: number;
  jkt?: string;
  /** Binds the new refresh token to a key (DPoP-bound refresh tokens stay bound). */
  refreshJkt?: string;
  grant_id: string;
  /**
   * The spending of what the tokens are for (the code, the refresh token), queued before the
   * tokens' writes so all share one commit. When it fails, the tokens just stored (seen by nobody)
   * are deleted and its error is the answer.
   */
  spent?: Promise<void>;
  /** The IdP session the grant came from: `sid` of ID tokens (back-channel logout). */
  sid?: string;
  /** The authorization request's `claims` parameter (claims-request.ts). */
  claimsRequest?: ClaimsRequest;
}

async function atHash(accessToken: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken)));
  return base64urlEncode(digest.subarray(0, 16));
}

/** An RFC 9068 access token: the same claims a resource server would get from /introspect. */
async function signAccessToken(p: Provider, req: Issuance, now: number): Promise<string> {
  const iat = Math.floor(now / 1000);
  const claims: Record<string, unknown> = {
    iss: req.issuer,
    sub: req.user?.sub ?? req.client.client_id,
    aud: p.options.accessTokenAudience || req.client.client_id,
    client_id: req.client.client_id,
    scope: req.scope,
    iat,
    exp: iat + LIFETIME_MS.accessToken / 1000,
    jti: p.secret(),
  };
  const mapped = configuredClaims(p, req, "access_token");
  const extra = req.user ? userClaims(req.user, mapped) : mapped;
  for (const [k, v] of Object.entries(extra ?? {})) if (!(k in claims)) claims[k] = v;
  const { cnf } = senderConstraint(req.jkt);
  if (cnf) claims.cnf = cnf;
  const keys = await p.keys();
  return keys.sign(claims, undefined, "at+jwt", idTokenAlg(req.client));
}

/** The configured claims (claim-mappings.ts) of one token of this issuance. */
const configuredClaims = (p: Provider, req: Issuance, target: ClaimTarget) =>
  mappedClaims(p.options.claimMappings, target, { client_id: req.client.client_id, scope: req.scope, sub: req.user?.sub });

export async function issueTokens(p: Provider, req: Issuance): Promise<TokenResponse> {
  // The spending settles while the tokens are signed; its failure is read in storedUnlessUnspent,
  // after an await. Marked handled now: unhandled meanwhile, a rejection ends the process.
  req.spent?.catch(() => {});
  const now = p.now();
  // A JWT is also stored under its own text, so /userinfo, /introspect and /revoke treat both alike.
  const accessToken = p.options.accessTokenFormat === "jwt" ? await signAccessToken(p, req, now) : p.secret();
  const access: AccessTokenRecord = {
    client_id: req.client.client_id,
    sub: req.user?.sub ?? req.client.client_id,
    scope: req.scope,
    grant_id: req.grant_id,
    issued_at: now,
    expires_at: now + LIFETIME_MS.accessToken,
  };
  if (req.user) access.login = req.user.login;
  if (req.user?.claims) access.claims = req.user.claims;
  if (req.jkt) access.jkt = req.jkt;
  const context = userinfoContextClaims(req.claimsRequest, { acr: req.acr, amr: req.amr, auth_time: req.auth_time });
  if (context) access.userinfo_context = context;
  // Queued in one turn, the writes share one commit; the ID token is signed meanwhile, and the
  // response waits for both.
  const stores: [TokenKind, string][] = [["access_token", accessToken]];
  const writes: Promise<void>[] = [p.put("access_token", accessToken, access, { pruneAt: access.expires_at, group: req.grant_id })];
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: senderConstraint(req.jkt).token_type,
    expires_in: LIFETIME_MS.accessToken / 1000,
    scope: req.scope,
  };
  if (req.user && hasScope(req.scope, "offline_access") && allowsGrant(req.client, "refresh_token")) {
    const refreshToken = p.secret();
    const refresh: RefreshTokenRecord = {
      client_id: req.client.client_id,
      sub: req.user.sub,
      login: req.user.login,
      scope: req.scope,
      grant_id: req.grant_id,
      auth_time: req.auth_time ?? now,
      issued_at: now,
      expires_at: now + LIFETIME_MS.refreshToken,
    };
    if (req.refreshJkt) refresh.jkt = req.refreshJkt;
    if (req.sid) refresh.sid = req.sid;
    if (req.user.claims) refresh.claims = req.user.claims;
    if (req.acr !== undefined) refresh.acr = req.acr;
    if (req.amr !== undefined) refresh.amr = req.amr;
    if (req.claimsRequest !== undefined) refresh.claims_request = req.claimsRequest;
    stores.push(["refresh_token", refreshToken]);
    writes.push(p.put("refresh_token", refreshToken, refresh, { pruneAt: refresh.expires_at, group: req.grant_id }));
    response.refresh_token = refreshToken;
  }
  const stored = storedUnlessUnspent(p, writes, stores, req.spent);
  if (req.user && hasScope(req.scope, "openid")) {
    const idToken = signIdToken(p, req, accessToken, now);
    await Promise.all([stored, idToken]);
    response.id_token = await idToken;
  } else {
    await stored;
  }
  await undoIfRevoked(p, req.grant_id);
  return response;
}

/** Waits for the token writes; when the spending failed, deletes the tokens again and throws its error. */
async function storedUnlessUnspent(p: Provider, writes: Promise<void>[], stores: [TokenKind, string][], spent?: Promise<void>): Promise<void> {
  const [spending, ...written] = await Promise.allSettled([spent, ...writes]);
  if (spending!.status === "rejected") {
    await Promise.all(stores.map(([kind, key]) => p.state.delete(kind, key)));
    throw spending!.reason;
  }
  for (const w of written) if (w.status === "rejected") throw w.reason;
}

/**
 * Store, then check: a revocation of the grant (a replayed code or refresh token, here or at
 * another instance) that ran while these tokens were being stored may have deleted the grant's
 * tokens before they landed. It marked the grant first (revokeGrant), so reading no mark after
 * storing means its deletion is still to come; reading one, the tokens just stored go here.
 */
export async function undoIfRevoked(p: Provider, grantId: string): Promise<void> {
  if (!(await grantRevoked(p, grantId))) return;
  await p.state.deleteGroup(GRANT_TOKENS, grantId);
  throw new OAuthError("invalid_grant", "the grant was revoked meanwhile (a code or refresh token of it was reused)");
}

async function signIdToken(p: Provider, req: Issuance, accessToken: string, now: number): Promise<string> {
  const user = req.user!;
  const effect = user.scenario?.effects.idToken;
  let iat = Math.floor(now / 1000);
  if (effect === "expired") iat -= 2 * 3600;
  if (effect === "future-iat") iat += 3600;
  const claims: Record<string, unknown> = {
    iss: effect === "wrong-iss" ? "https://wrong-issuer.example.test" : req.issuer,
    sub: user.sub,
    aud: effect === "wrong-aud" ? "some-other-client" : req.client.client_id,
    exp: iat + LIFETIME_MS.idToken / 1000,
    iat,
    auth_time: Math.floor((req.auth_time ?? now) / 1000),
  };
  if (req.nonce !== undefined) claims.nonce = effect === "bad-nonce" ? `not-${req.nonce}` : req.nonce;
  if (req.sid !== undefined) claims.sid = req.sid;
  // The login's authentication context; a user's own claims of these names (typed at login) win.
  if (req.acr !== undefined) claims.acr = req.acr;
  if (req.amr !== undefined) claims.amr = req.amr;
  claims.at_hash = await atHash(accessToken);
  for (const [k, v] of Object.entries(userClaims(user, configuredClaims(p, req, "id_token")))) if (k !== "sub") claims[k] = v;
  if (effect === "missing-email") {
    delete claims.email;
    delete claims.email_verified;
  }
  if (effect === "email-unverified") claims.email_verified = false;
  const keys = await p.keys();
  return keys.sign(claims, user.scenario?.effects.signKey, undefined, idTokenAlg(req.client));
}

const GRANT_TOKENS = ["access_token", "refresh_token"] as const;
type TokenKind = (typeof GRANT_TOKENS)[number];

/**
 * Deletes every access and refresh token of one grant (code replay, refresh token reuse, refresh
 * revocation). The grant is marked revoked first, so a token request of it storing tokens at the
 * same moment (at any instance) finds the mark afterwards and undoes them (issueTokens). The mark
 * lasts as long as a refresh token: far beyond any request in flight. A grant made in a session
 * takes the session's group with it (grant-ids.ts): what its ID tokens were exchanged for, and
 * any later exchange of them (token-exchange.ts).
 */
export async function revokeGrant(p: Provider, grantId: string): Promise<void> {
  const sid = sessionOfGrant(grantId);
  await Promise.all(
    [grantId, ...(sid === undefined ? [] : [sessionGrantId(sid)])].map(async (id) => {
      await p.put("revoked_grant", id, true satisfies RevokedGrantRecord, { pruneAt: p.now() + LIFETIME_MS.refreshToken });
      await p.state.deleteGroup(GRANT_TOKENS, id);
    }),
  );
}

/** True once `revokeGrant` ran for the grant (until its mark is pruned). */
export async function grantRevoked(p: Provider, grantId: string): Promise<boolean> {
  return (await p.state.get<RevokedGrantRecord>("revoked_grant", grantId)) !== undefined;
}

/**
 * The marks of a DPoP-bound access token (RFC 9449 §6): `cnf.jkt` in its JWT form and
 * `token_type` DPoP in the token response; a bearer token has neither.
 */
export function senderConstraint(jkt: string | undefined): { token_type: "DPoP" | "Bearer"; cnf?: { jkt: string } } {
  return jkt === undefined ? { token_type: "Bearer" } : { token_type: "DPoP", cnf: { jkt } };
}
