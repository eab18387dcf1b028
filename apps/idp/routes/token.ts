/**
 * The token endpoint: authorization_code (PKCE), refresh_token (rotation with reuse detection,
 * client and DPoP binding), device_code and client_credentials. Errors are OAuth JSON with no-store.
 */
import type { Context, Hono } from "hono";
import { allowsGrant, type Client, isConfidential } from "../domain/clients.ts";
import { authenticateRequestClient } from "../domain/client-auth.ts";
import type { LoginClaims, User } from "../domain/claims.ts";
import { DpopError, type VerifiedProof } from "#lib/oauth";
import { OAuthError } from "../domain/errors.ts";
import { JWT_BEARER_GRANT, verifyGrantAssertion } from "../domain/jwt-bearer.ts";
import { issueTokens, revokeGrant, type TokenResponse } from "../domain/issue.ts";
import { isScopeToken, scopeList } from "../domain/scopes.ts";
import { verifyPkce } from "../domain/pkce.ts";
import type { Provider } from "../domain/provider.ts";
import type { StateKind } from "../state/store.ts";
import {
  type CodeRecord,
  type DeviceGrantRecord,
  EXPIRED_GRANT_GRACE_MS,
  type RefreshTokenRecord,
  SLOW_DOWN_STEP_S,
  type UsedCodeRecord,
  type UsedRefreshRecord,
} from "../domain/records.ts";
import { DEVICE_CODE_GRANT, GRANT_TYPES } from "./discovery.ts";
import { rememberLogoutClient } from "../domain/backchannel.ts";
import { checkProof } from "./dpop.ts";
import { TOKEN_EXCHANGE_GRANT, tokenExchange } from "./token-exchange.ts";
import { endpoints, NO_STORE, type Params, readOAuthForm } from "./http.ts";

interface GrantContext {
  c: Context;
  p: Provider;
  client: Client;
  form: Map<string, string>;
  issuer: string;
  proof?: VerifiedProof;
}

const invalidGrant = (description: string) => new OAuthError("invalid_grant", description);

function required(form: Map<string, string>, name: string): string {
  const value = form.get(name);
  if (value === undefined) throw new OAuthError("invalid_request", `${name} is required`);
  return value;
}

/** Token scenarios act after the request is valid and before anything is spent. */
async function applyTokenScenario(p: Provider, user: User): Promise<void> {
  const effect = user.scenario?.effects.token;
  if (effect === "invalid_grant") throw invalidGrant(`scenario ${user.login}`);
  if (effect === "server_error") throw new OAuthError("server_error", `scenario ${user.login}`, 500);
  if (effect === "slow") await p.options.sleep(p.options.tokenSlowMs);
}

async function userFor(p: Provider, login: string, sub: string, claims?: LoginClaims): Promise<User> {
  const user: User = { ...(await p.resolveUser(login)), sub };
  if (claims) user.claims = claims;
  return user;
}

async function authorizationCode(g: GrantContext): Promise<TokenResponse> {
  const { p, client, form } = g;
  const code = required(g.form, "code");
  const now = p.now();
  // A spent code leaves its used mark and its record in the same commit (spendOnce), so the mark
  // is looked for only when the code is gone.
  const record = await p.state.get<CodeRecord>("code", code);
  const used = record ? undefined : await p.state.get<UsedCodeRecord>("used_code", code);
  if (used !== undefined) {
    // A replayed code: revoke everything it issued (RFC 6749 §4.1.2).
    await revokeGrant(p, used);
    throw codeReplayed();
  }
  if (!record || record.expires_at <= now) throw invalidGrant("authorization code is unknown or expired");
  if (record.client_id !== client.client_id) throw invalidGrant("authorization code was issued to another client");
  if (form.get("redirect_uri") !== record.redirect_uri) throw invalidGrant("redirect_uri does not match the authorization request");
  const verifier = form.get("code_verifier");
  if (record.code_challenge !== undefined) {
    if (verifier === undefined) throw invalidGrant("code_verifier is required (PKCE)");
    if (!(await verifyPkce(record.code_challenge_method!, record.code_challenge, verifier))) {
      throw invalidGrant("code_verifier does not match the code_challenge");
    }
  } else if (verifier !== undefined) {
    throw invalidGrant("code_verifier sent but the authorization request had no code_challenge");
  }
  if (record.dpop_jkt !== undefined && g.proof?.jkt !== record.dpop_jkt) {
    throw new OAuthError("invalid_dpop_proof", "a DPoP proof of the key named by dpop_jkt is required");
  }
  const user = await userFor(p, record.login, record.sub, record.claims);
  await applyTokenScenario(p, user);
  // Registered for back-channel logout once the code is spent, before the response.
  const spent = spendOnce(p, { record: "code", used: "used_code" }, code, record, codeReplayed, codeGone).then(() =>
    rememberLogoutClient(p, { iss: g.issuer, sid: record.sid, sub: record.sub, client_id: client.client_id, auth_time: record.auth_time })
  );
  return issueTokens(p, {
    spent,
    sid: record.sid,
    issuer: g.issuer,
    client,
    user,
    scope: record.scope,
    nonce: record.nonce,
    auth_time: record.auth_time,
    acr: record.acr,
    amr: record.amr,
    claimsRequest: record.claims_request,
    jkt: g.proof?.jkt,
    refreshJkt: g.proof?.jkt,
    grant_id: record.grant_id,
  });
}

const codeReplayed = () => invalidGrant("authorization code was already used; the tokens it issued are revoked");
const codeGone = () => invalidGrant("authorization code is unknown or expired");

/**
 * Spends a code or a refresh token: its used mark is added and the record taken, both queued at
 * once, so they share one commit with the tokens issued for it (issueTokens' `spent`; the tokens,
 * seen by nobody yet, are deleted again when the spending fails). The add decides between
 * concurrent uses (here or at another instance): one that finds the mark there is a reuse and
 * revokes the grant, whichever got there first, and any later one finds the mark as well. The
 * take then fails only if the grant was revoked (and the record taken) meanwhile.
 */
async function spendOnce<R extends { grant_id: string; expires_at: number }>(
  p: Provider,
  kinds: { record: StateKind; used: StateKind },
  key: string,
  record: R,
  reused: () => OAuthError,
  gone: () => OAuthError,
): Promise<void> {
  const marked = p.add(kinds.used, key, record.grant_id, { pruneAt: record.expires_at });
  const taken = p.state.take(kinds.record, key, record);
  if (!(await marked)) {
    await taken;
    await revokeGrant(p, record.grant_id);
    throw reused();
  }
  if (!(await taken)) throw gone();
}

async function refreshToken(g: GrantContext): Promise<TokenResponse> {
  const { p, client, form } = g;
  const token = required(form, "refresh_token");
  const record = await p.state.get<RefreshTokenRecord>("refresh_token", token);
  if (!record) await revokeIfReused(p, token);
  if (!record || record.expires_at <= p.now()) throw refreshGone();
  if (record.client_id !== client.client_id) throw invalidGrant("refresh token was issued to another client");
  if (record.jkt !== undefined) {
    if (!g.proof) throw invalidGrant("refresh token is DPoP-bound: a DPoP proof is required");
    if (g.proof.jkt !== record.jkt) throw invalidGrant("DPoP proof key does not match the refresh token's binding");
  }
  let scope = record.scope;
  const requested = form.get("scope");
  if (requested !== undefined) {
    const granted = new Set(scopeList(record.scope));
    const narrowed = scopeList(requested);
    if (!narrowed.every((s) => granted.has(s))) throw new OAuthError("invalid_scope", "scope exceeds the original grant");
    if (!narrowed.includes("offline_access")) narrowed.push("offline_access");
    scope = [...new Set(narrowed)].join(" ");
  }
  const user = await userFor(p, record.login, record.sub, record.claims);
  await applyTokenScenario(p, user);
  const spent = spendOnce(p, { record: "refresh_token", used: "used_refresh_token" }, token, record, reused, refreshGone);
  // A bound refresh token stays bound; a public client's becomes bound by its first proof.
  const refreshJkt = record.jkt ?? (isConfidential(client) ? undefined : g.proof?.jkt);
  return issueTokens(p, {
    spent,
    sid: record.sid,
    issuer: g.issuer,
    client,
    user,
    scope,
    auth_time: record.auth_time,
    acr: record.acr,
    amr: record.amr,
    claimsRequest: record.claims_request,
    jkt: g.proof?.jkt,
    refreshJkt,
    grant_id: record.grant_id,
  });
}

const reused = () => invalidGrant("refresh token was already used; every token of its grant is revoked");
const refreshGone = () => invalidGrant("refresh token is unknown, expired or already used");

/**
 * A rotated refresh token presented again means two parties hold it (RFC 9700 §4.14.2): its
 * whole grant is revoked, the successor refresh token and every access token with it.
 */
async function revokeIfReused(p: Provider, token: string): Promise<void> {
  const grantId = await p.state.get<UsedRefreshRecord>("used_refresh_token", token);
  if (grantId === undefined) return;
  await revokeGrant(p, grantId);
  throw reused();
}

async function deviceCode(g: GrantContext): Promise<TokenResponse> {
  const { p, client, form } = g;
  const code = required(form, "device_code");
  const grant = await p.state.get<DeviceGrantRecord>("device_grant", code);
  if (!grant || grant.client_id !== client.client_id) throw invalidGrant("device code is unknown, already used, or belongs to another client");
  const now = p.now();
  if (grant.expires_at <= now) throw new OAuthError("expired_token", "the device code has expired");
  if (grant.status === "denied") throw new OAuthError("access_denied", "the user denied the request");
  if (grant.status === "pending") {
    const tooSoon = grant.last_poll !== undefined && now - grant.last_poll < grant.interval * 1000;
    const next: DeviceGrantRecord = { ...grant, last_poll: now, interval: tooSoon ? grant.interval + SLOW_DOWN_STEP_S : grant.interval };
    // Only as read: a decision made meanwhile is answered on a fresh read.
    if (!(await p.state.swap("device_grant", code, grant, next, { pruneAt: grant.expires_at + EXPIRED_GRANT_GRACE_MS }))) return deviceCode(g);
    if (tooSoon) throw new OAuthError("slow_down", `polling too fast: wait at least ${next.interval} seconds between polls`);
    throw new OAuthError("authorization_pending", "the user has not approved the request yet");
  }
  const user = await userFor(p, grant.login!, grant.sub!);
  await applyTokenScenario(p, user);
  // Of concurrent exchanges (here or at another instance) one takes the grant.
  if (!(await p.state.take("device_grant", code, grant))) throw invalidGrant("device code is unknown or already used");
  return issueTokens(p, {
    spent: p.state.delete("user_code", grant.user_code),
    issuer: g.issuer,
    client,
    user,
    scope: grant.scope,
    auth_time: grant.auth_time,
    jkt: g.proof?.jkt,
    refreshJkt: g.proof?.jkt,
    grant_id: p.grantId(),
  });
}

/** The `scope` of a grant that takes any the client may have: its tokens, each well-formed (RFC 6749 §3.3). */
function requestedScopes(form: Map<string, string>): string[] {
  const scopes = scopeList(form.get("scope") ?? "");
  if (!scopes.every(isScopeToken)) throw new OAuthError("invalid_scope", "scope is malformed: space-separated tokens of printable ASCII");
  return scopes;
}

async function clientCredentials(g: GrantContext): Promise<TokenResponse> {
  const { p, client, form } = g;
  if (!isConfidential(client)) throw new OAuthError("unauthorized_client", "client_credentials needs a confidential client");
  const scopes = requestedScopes(form);
  if (scopes.includes("openid") || scopes.includes("offline_access")) {
    throw new OAuthError("invalid_scope", "openid and offline_access need a user; client_credentials has none");
  }
  if (client.allowed_scopes && !scopes.every((s) => client.allowed_scopes!.has(s))) throw new OAuthError("invalid_scope", "scope not allowed for this client");
  return issueTokens(p, { issuer: g.issuer, client, scope: [...new Set(scopes)].join(" "), jkt: g.proof?.jkt, grant_id: p.grantId() });
}

/**
 * RFC 7523 §2.1: an access token (no ID token, no refresh token: the assertion is what the client
 * presents again) for the subject of an assertion from a trusted issuer (domain/jwt-bearer.ts).
 */
async function jwtBearer(g: GrantContext): Promise<TokenResponse> {
  const { p, client, form } = g;
  const assertion = required(form, "assertion");
  const scopes = requestedScopes(form);
  if (scopes.includes("openid") || scopes.includes("offline_access")) {
    throw new OAuthError("invalid_scope", "openid and offline_access are not granted for an assertion");
  }
  if (client.allowed_scopes && !scopes.every((s) => client.allowed_scopes!.has(s))) throw new OAuthError("invalid_scope", "scope not allowed for this client");
  const { subject } = await verifyGrantAssertion(p, assertion, [g.issuer, endpoints(g.issuer).token_endpoint]);
  const user = await userFor(p, subject, subject);
  // The subject stands for a typed login, so its token scenarios apply as at the other grants
  // (after the assertion's jti is spent: a client presents a fresh assertion anyway).
  await applyTokenScenario(p, user);
  return issueTokens(p, { issuer: g.issuer, client, user, scope: [...new Set(scopes)].join(" "), jkt: g.proof?.jkt, grant_id: p.grantId() });
}

const GRANTS: Record<string, (g: GrantContext) => Promise<TokenResponse>> = {
  [JWT_BEARER_GRANT]: jwtBearer,
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  [DEVICE_CODE_GRANT]: deviceCode,
  client_credentials: clientCredentials,
  [TOKEN_EXCHANGE_GRANT]: (g) =>
    tokenExchange({ p: g.p, client: g.client, form: g.form, issuer: g.issuer, proof: g.proof, applyScenario: (user) => applyTokenScenario(g.p, user) }),
};

/**
 * Client authentication shared by /token, /device_authorization, /introspect, /revoke and pushed
 * authorization requests (domain/client-auth.ts). An assertion's `aud` may be the issuer, this
 * endpoint's advertised URL or the token endpoint's.
 */
export function authenticate(c: Context, p: Provider, form: Params): Promise<Client> {
  const issuer = p.issuerFor(c.req.url);
  const endpoint = new URL(c.req.url).pathname.split("/").pop();
  const audiences = [issuer, `${issuer}/${endpoint}`, endpoints(issuer).token_endpoint];
  return authenticateRequestClient(p, { authorization: c.req.header("authorization"), form: form.values, audiences });
}

export function registerToken(app: Hono, p: Provider): void {
  app.post("/token", async (c) => {
    const form = await readOAuthForm(c);
    const grantType = form.values.get("grant_type");
    if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
    const client = await authenticate(c, p, form);
    const jwtBearerOn = grantType === JWT_BEARER_GRANT && (p.options.jwtBearerIssuers ?? []).length > 0;
    if (!GRANT_TYPES.includes(grantType) && !jwtBearerOn) throw new OAuthError("unsupported_grant_type", `grant_type ${grantType} is not supported`);
    if (!allowsGrant(client, grantType)) throw new OAuthError("unauthorized_client", `the client may not use ${grantType}`);
    const issuer = p.issuerFor(c.req.url);
    let proof: VerifiedProof | undefined;
    try {
      proof = await checkProof(c, p, endpoints(issuer).token_endpoint);
    } catch (err) {
      if (err instanceof DpopError) throw new OAuthError(err.code, err.message);
      throw err;
    }
    const body = await GRANTS[grantType]!({ c, p, client, form: form.values, issuer, proof });
    return c.json(body, 200, NO_STORE);
  });
}
