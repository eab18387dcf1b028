/**
 * OAuth 2.0 Token Exchange (RFC 8693) at /token: a confidential client exchanges an access token
 * or an ID token of this issuer (`subject_token`, and optionally an `actor_token`) for an access
 * token with another audience (`audience`, `resource`) and a scope no wider than the subject's.
 * The new token carries `act` when an actor is given; introspection shows `aud` and `act`.
 *
 * A single `audience` and a single `resource` (each optional; a repeated parameter is
 * `invalid_request`, as at every OAuth endpoint here). Only access tokens are issued.
 *
 * Nothing the provider signed is trusted unverified, in the wrong place or without its binding:
 * a DPoP-bound token is exchanged only with a proof of its key, and what it gives stays bound
 * (RFC 9449 §7.1); an ID token must be typed as one (RFC 8725 §3.11), be addressed to the caller,
 * and what it gives dies with the session it was issued in.
 */
import type { VerifiedProof } from "#lib/oauth";
import { sessionGrantId } from "../domain/grant-ids.ts";
import { idTokenAlg } from "../domain/algorithms.ts";
import { type Client, isConfidential } from "../domain/clients.ts";
import { OAuthError } from "../domain/errors.ts";
import { grantRevoked, senderConstraint, type TokenResponse, undoIfRevoked } from "../domain/issue.ts";
import { scopeList } from "../domain/scopes.ts";
import type { Provider } from "../domain/provider.ts";
import { type AccessTokenRecord, LIFETIME_MS, type SessionRecord } from "../domain/records.ts";
import type { User } from "../domain/claims.ts";
import { verifyOwnIdToken } from "../domain/signed-jwt.ts";
import { SCOPES, TOKEN_EXCHANGE_GRANT } from "./discovery.ts";

export { TOKEN_EXCHANGE_GRANT };
const TOKEN_TYPE = {
  access_token: "urn:ietf:params:oauth:token-type:access_token",
  id_token: "urn:ietf:params:oauth:token-type:id_token",
} as const;
const SUPPORTED_TYPES: readonly string[] = Object.values(TOKEN_TYPE);

/** An access token issued by an exchange: the audience asked for and the actor, if any. */
export interface ExchangedTokenRecord extends AccessTokenRecord {
  aud?: string[];
  act?: Actor;
  /** The session it ends with: it was exchanged (directly or through other exchanges) for an ID token of it. */
  sid?: string;
}

/** RFC 8693 §4.1: the acting party, with the chain of earlier actors nested. */
export interface Actor {
  sub: string;
  client_id?: string;
  act?: Actor;
}

/** What a subject or actor token says. */
interface Presented {
  sub: string;
  /** The user's login (absent for a client_credentials token). */
  login?: string;
  /** The scope the token was granted (ID tokens: undefined, see exchange). */
  scope?: string;
  client_id?: string;
  grant_id?: string;
  expires_at: number;
  act?: Actor;
  /** The key a DPoP-bound access token is bound to: using it, exchanging included, needs a proof of that key. */
  jkt?: string;
  /** The session what it gives must end with (an ID token's, or carried by an exchanged token). */
  sid?: string;
  /** The stored record, for fields carried over (claims typed at login). */
  record?: AccessTokenRecord;
}

interface ExchangeInput {
  p: Provider;
  client: Client;
  form: Map<string, string>;
  issuer: string;
  /** The token scenarios of the other grants, applied to the subject's user. */
  applyScenario(user: User): Promise<void>;
  /** The request's verified DPoP proof, if it had one (its jti is already spent: token.ts). */
  proof?: VerifiedProof;
}

/**
 * An ID token of this issuer: typed as one, signed by one of its published keys, unexpired by the
 * provider clock, and issued to the calling client (`aud`): an ID token is a statement to its
 * audience, not a bearer credential, so another client holding it (leaked, or handed on) may not
 * turn it into an access token. Its `sid` names the session it was issued in (the code flow): it
 * counts while that session lives, and the new token gets that session's grant, so ending the
 * session revokes it (backchannel.ts endSessions). An ID token without `sid` (the device flow) is
 * tied the same way to a live session of its subject.
 */
async function presentedIdToken(input: ExchangeInput, token: string, name: string): Promise<Presented> {
  const { p } = input;
  const verified = await verifyOwnIdToken(await p.keys(), token, { issuer: input.issuer, now: p.now() });
  if (!verified.ok) throw new OAuthError("invalid_grant", `${name} is not a valid ID token of this issuer (${verified.reason})`);
  const claims = verified.payload;
  if (typeof claims.sub !== "string" || claims.exp === undefined) throw new OAuthError("invalid_grant", `${name} has no sub or exp`);
  const audience = typeof claims.aud === "string" ? [claims.aud] : claims.aud ?? [];
  if (!audience.includes(input.client.client_id)) {
    throw new OAuthError("invalid_grant", `${name} was issued to another client: only a client in its aud may exchange it`);
  }
  const session = await liveSession(p, claims.sub, claims.sid);
  if (!session) throw new OAuthError("invalid_grant", `${name}: the session it was issued in has ended (logged out)`);
  if (await grantRevoked(p, sessionGrantId(session.sid))) {
    throw new OAuthError("invalid_grant", `${name}: a code or refresh token of its session was reused, so its grants are revoked`);
  }
  return {
    sub: claims.sub,
    login: session.login,
    grant_id: sessionGrantId(session.sid),
    sid: session.sid,
    expires_at: Math.min(claims.exp * 1000, session.expires_at),
  };
}

/** The live session `sid` names among the subject's (any live one when there is no `sid`); only sessions with a sid can be tied to. */
async function liveSession(p: Provider, sub: string, sid: unknown): Promise<(SessionRecord & { sid: string }) | undefined> {
  const now = p.now();
  const sessions = (await p.state.groupEntries<SessionRecord>("session", sub)).map(([, s]) => s);
  return sessions.find((s): s is SessionRecord & { sid: string } => s.expires_at > now && s.sid !== undefined && (sid === undefined || s.sid === sid));
}

async function presented(input: ExchangeInput, token: string, type: string, name: string): Promise<Presented> {
  const { p } = input;
  if (type === TOKEN_TYPE.id_token) return presentedIdToken(input, token, name);
  const record = await p.state.get<ExchangedTokenRecord>("access_token", token);
  if (!record || record.expires_at <= p.now()) throw new OAuthError("invalid_grant", `${name} is unknown, expired or revoked at this issuer`);
  const out: Presented = {
    sub: record.sub,
    scope: record.scope,
    client_id: record.client_id,
    grant_id: record.grant_id,
    expires_at: record.expires_at,
    record,
  };
  if (record.login !== undefined) out.login = record.login;
  if (record.act) out.act = record.act;
  if (record.jkt !== undefined) out.jkt = record.jkt;
  if (record.sid !== undefined) out.sid = record.sid;
  return out;
}

/**
 * Exchanging a DPoP-bound token is using it (RFC 9449 §7.1, RFC 8693 §2.1): it takes a proof of
 * the same key, as a bound refresh token does at /token; otherwise whoever stole the token could
 * swap it for a bearer one.
 */
function checkBinding(token: Presented, proof: VerifiedProof | undefined, name: string): void {
  if (token.jkt === undefined) return;
  if (!proof) throw new OAuthError("invalid_grant", `${name} is DPoP-bound: a DPoP proof of its key is required`);
  if (proof.jkt !== token.jkt) throw new OAuthError("invalid_grant", `DPoP proof key does not match the ${name}'s binding`);
}

function tokenType(form: Map<string, string>, name: "subject_token_type" | "actor_token_type"): string {
  const type = form.get(name);
  if (type === undefined) throw new OAuthError("invalid_request", `${name} is required`);
  if (!SUPPORTED_TYPES.includes(type)) {
    throw new OAuthError("unsupported_token_type", `${name} ${type} is not supported; use ${SUPPORTED_TYPES.join(" or ")}`);
  }
  return type;
}

/** The audience of the new token: `audience` (a name) and `resource` (an absolute URI without fragment). */
function targets(form: Map<string, string>): string[] {
  const out: string[] = [];
  const audience = form.get("audience");
  if (audience !== undefined) {
    if (audience.length > 512) throw new OAuthError("invalid_target", "audience is too long");
    out.push(audience);
  }
  const resource = form.get("resource");
  if (resource !== undefined) {
    let url: URL;
    try {
      url = new URL(resource);
    } catch {
      throw new OAuthError("invalid_target", "resource must be an absolute URI");
    }
    if (url.hash !== "" || resource.includes("#")) throw new OAuthError("invalid_target", "resource must not have a fragment");
    if (resource.length > 2048) throw new OAuthError("invalid_target", "resource is too long");
    out.push(resource);
  }
  return [...new Set(out)];
}

/** The scope asked for, within what the subject was granted (ID tokens: the scopes the provider knows). */
function grantedScope(input: ExchangeInput, subject: Presented): string {
  const requested = input.form.get("scope");
  const available = new Set(scopeList(subject.scope ?? "openid").filter((s) => s !== "offline_access"));
  const scopes = requested === undefined ? [...available] : scopeList(requested);
  const ceiling = subject.scope === undefined ? new Set(SCOPES.filter((s) => s !== "offline_access")) : available;
  if (!scopes.every((s) => ceiling.has(s))) throw new OAuthError("invalid_scope", "scope exceeds what the subject token was granted");
  const allowed = input.client.allowed_scopes;
  if (allowed && !scopes.every((s) => allowed.has(s))) throw new OAuthError("invalid_scope", "scope not allowed for this client");
  return [...new Set(scopes)].join(" ");
}

export async function tokenExchange(input: ExchangeInput): Promise<TokenResponse & { issued_token_type: string }> {
  const { p, client, form } = input;
  if (!isConfidential(client)) throw new OAuthError("unauthorized_client", "token exchange needs a confidential client");
  const subjectToken = form.get("subject_token");
  if (subjectToken === undefined) throw new OAuthError("invalid_request", "subject_token is required");
  const subjectType = tokenType(form, "subject_token_type");
  const actorToken = form.get("actor_token");
  if (actorToken === undefined && form.has("actor_token_type")) throw new OAuthError("invalid_request", "actor_token_type without actor_token");
  const actorType = actorToken === undefined ? undefined : tokenType(form, "actor_token_type");
  const requestedType = form.get("requested_token_type");
  if (requestedType !== undefined && requestedType !== TOKEN_TYPE.access_token) {
    throw new OAuthError("invalid_request", `requested_token_type ${requestedType} is not issued here; use ${TOKEN_TYPE.access_token}`);
  }
  const audience = targets(form);
  const subject = await presented(input, subjectToken, subjectType, "subject_token");
  const actor = actorToken === undefined ? undefined : await presented(input, actorToken, actorType!, "actor_token");
  checkBinding(subject, input.proof, "subject_token");
  if (actor) checkBinding(actor, input.proof, "actor_token");
  // The new token can end with one session only: the subject's (its record's sid).
  if (actor?.sid !== undefined && actor.sid !== subject.sid) {
    throw new OAuthError(
      "invalid_request",
      "actor_token is tied to a browser session (an ID token, or a token exchanged from one) that the subject_token is not",
    );
  }
  const scope = grantedScope(input, subject);
  if (subject.login !== undefined) await input.applyScenario({ ...(await p.resolveUser(subject.login)), sub: subject.sub });

  const now = p.now();
  const expiresAt = Math.min(now + LIFETIME_MS.accessToken, subject.expires_at);
  const grantId = subject.grant_id ?? p.grantId();
  let act: Actor | undefined;
  if (actor) {
    act = { sub: actor.sub };
    if (actor.client_id !== undefined) act.client_id = actor.client_id;
    if (actor.act) act.act = actor.act;
  } else if (subject.act) {
    act = subject.act; // a token exchanged again keeps who acts
  }
  // Fields of the subject's record (claims typed at login, say) carry over; the rest is new.
  const { jkt: _jkt, aud: _aud, act: _act, ...carried } = (subject.record ?? {}) as Partial<ExchangedTokenRecord>;
  const record: ExchangedTokenRecord = {
    ...carried,
    client_id: client.client_id,
    sub: subject.sub,
    scope,
    grant_id: grantId,
    issued_at: now,
    expires_at: expiresAt,
  };
  if (subject.login !== undefined) record.login = subject.login;
  else delete record.login;
  if (audience.length > 0) record.aud = audience;
  if (act) record.act = act;
  if (subject.sid !== undefined) record.sid = subject.sid;
  // A bound subject stays bound (the proof is of its key, checked above); with a proof, an
  // unbound one becomes bound, as at the other grants.
  const constraint = senderConstraint(input.proof?.jkt);
  if (constraint.cnf) record.jkt = constraint.cnf.jkt;

  const accessToken = p.options.accessTokenFormat === "jwt" ? await signExchanged(p, input.issuer, record) : p.secret();
  await p.put("access_token", accessToken, record, { pruneAt: expiresAt, group: grantId });
  await undoIfSessionEnded(p, accessToken, record);
  // A grant revoked meanwhile (a reused code or refresh token of the subject's grant) takes it too.
  await undoIfRevoked(p, grantId);
  const response: TokenResponse & { issued_token_type: string } = {
    access_token: accessToken,
    issued_token_type: TOKEN_TYPE.access_token,
    token_type: constraint.token_type,
    expires_in: Math.max(0, Math.floor((expiresAt - now) / 1000)),
    scope,
  };
  return response;
}

/**
 * Store, then check (as issueTokens does for a revoked grant): a logout that ended the session
 * while this token was being stored may have revoked the session's tokens before it landed, so a
 * session gone now takes the token with it.
 */
async function undoIfSessionEnded(p: Provider, token: string, record: ExchangedTokenRecord): Promise<void> {
  if (record.sid === undefined || (await liveSession(p, record.sub, record.sid))) return;
  await p.state.delete("access_token", token);
  throw new OAuthError("invalid_grant", "subject_token: its session ended meanwhile (logged out)");
}

/** The RFC 9068 form of an exchanged token (IDP_ACCESS_TOKEN_FORMAT=jwt). */
async function signExchanged(p: Provider, issuer: string, r: ExchangedTokenRecord): Promise<string> {
  const claims: Record<string, unknown> = {
    iss: issuer,
    sub: r.sub,
    aud: r.aud === undefined ? p.options.accessTokenAudience || r.client_id : r.aud.length === 1 ? r.aud[0] : r.aud,
    client_id: r.client_id,
    scope: r.scope,
    iat: Math.floor(r.issued_at / 1000),
    exp: Math.floor(r.expires_at / 1000),
    jti: p.secret(),
  };
  if (r.act) claims.act = r.act;
  const { cnf } = senderConstraint(r.jkt);
  if (cnf) claims.cnf = cnf;
  return (await p.keys()).sign(claims, undefined, "at+jwt", idTokenAlg(await p.findClient(r.client_id)));
}
