/**
 * Issuing tokens: opaque access and refresh tokens (cheap random secrets kept in the state store)
 * and RS256 ID tokens with `at_hash`, shaped by the user's ID token scenario.
 */
import { type User, userClaims } from "./claims.ts";
import { allowsGrant, type Client } from "./clients.ts";
import type { Provider } from "./provider.ts";
import { base64urlEncode } from "#lib/oauth";
import { type AccessTokenRecord, LIFETIME_MS, type RefreshTokenRecord } from "./records.ts";

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

export interface Issuance {
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
  /** A write that spent the grant (the used-code record, say): committed with the tokens. */
  spent?: Promise<void>;
  /** The IdP session the grant came from: `sid` of ID tokens (back-channel logout). */
  sid?: string;
}

export const scopeList = (scope: string) => scope.split(" ").filter((s) => s !== "");
export const hasScope = (scope: string, name: string) => scopeList(scope).includes(name);

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
  if (req.user) { for (const [k, v] of Object.entries(userClaims(req.user))) if (!(k in claims)) claims[k] = v; }
  if (req.jkt) claims.cnf = { jkt: req.jkt };
  const keys = await p.keys();
  return keys.sign(claims, undefined, "at+jwt");
}

export async function issueTokens(p: Provider, req: Issuance): Promise<TokenResponse> {
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
  // Queued in one turn, the writes share one commit; the ID token is signed meanwhile, and the
  // response waits for both.
  const writes: Promise<void>[] = [p.put("access_token", accessToken, access, { pruneAt: access.expires_at, group: req.grant_id })];
  if (req.spent) writes.push(req.spent);
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: req.jkt ? "DPoP" : "Bearer",
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
    writes.push(p.put("refresh_token", refreshToken, refresh, { pruneAt: refresh.expires_at, group: req.grant_id }));
    response.refresh_token = refreshToken;
  }
  const stored = Promise.all(writes);
  if (req.user && hasScope(req.scope, "openid")) {
    const idToken = signIdToken(p, req, accessToken, now);
    await Promise.all([stored, idToken]);
    response.id_token = await idToken;
  } else {
    await stored;
  }
  return response;
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
  claims.at_hash = await atHash(accessToken);
  for (const [k, v] of Object.entries(userClaims(user))) if (k !== "sub") claims[k] = v;
  if (effect === "missing-email") {
    delete claims.email;
    delete claims.email_verified;
  }
  if (effect === "email-unverified") claims.email_verified = false;
  const keys = await p.keys();
  return keys.sign(claims, user.scenario?.effects.signKey);
}

/** Deletes every access and refresh token of one grant (code replay, refresh revocation). */
export function revokeGrant(p: Provider, grantId: string): Promise<void> {
  return p.state.deleteGroup(["access_token", "refresh_token"], grantId);
}
