/**
 * OAuth 2.0 Token Exchange (RFC 8693) at /token: a confidential client exchanges an access token
 * or an ID token of this issuer (`subject_token`, and optionally an `actor_token`) for an access
 * token with another audience (`audience`, `resource`) and a scope no wider than the subject's.
 * The new token carries `act` when an actor is given; introspection shows `aud` and `act`.
 *
 * A single `audience` and a single `resource` (each optional; a repeated parameter is
 * `invalid_request`, as at every OAuth endpoint here). Only access tokens are issued.
 */
import type { JWTPayload } from "jose";
import { loadJose } from "#lib/oauth";
import { OAuthError } from "../domain/errors.ts";
import { scopeList, type TokenResponse } from "../domain/issue.ts";
import type { Provider } from "../domain/provider.ts";
import { type AccessTokenRecord, LIFETIME_MS, type SessionRecord } from "../domain/records.ts";
import type { User } from "../domain/claims.ts";
import { SCOPES, TOKEN_EXCHANGE_GRANT } from "./discovery.ts";

export { TOKEN_EXCHANGE_GRANT };
export const TOKEN_TYPE = {
  access_token: "urn:ietf:params:oauth:token-type:access_token",
  id_token: "urn:ietf:params:oauth:token-type:id_token",
} as const;
const SUPPORTED_TYPES: readonly string[] = Object.values(TOKEN_TYPE);

/** An access token issued by an exchange: the audience asked for and the actor, if any. */
export interface ExchangedTokenRecord extends AccessTokenRecord {
  aud?: string[];
  act?: Actor;
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
  /** The stored record, for fields carried over (claims typed at login). */
  record?: AccessTokenRecord;
}

export interface ExchangeInput {
  p: Provider;
  client: { client_id: string; secret?: string; allowed_scopes?: Set<string> };
  form: Map<string, string>;
  issuer: string;
  /** The token scenarios of the other grants, applied to the subject's user. */
  applyScenario(user: User): Promise<void>;
}

const verifiers = new WeakMap<object, ReturnType<typeof import("jose").createLocalJWKSet>>();

/** An ID token of this issuer: signed by one of its published keys, unexpired by the provider clock. */
async function presentedIdToken(p: Provider, token: string, issuer: string, name: string): Promise<Presented> {
  const { jwtVerify, createLocalJWKSet } = await loadJose();
  const ring = await p.keys();
  let keys = verifiers.get(ring);
  if (!keys) verifiers.set(ring, keys = createLocalJWKSet(JSON.parse(ring.jwksBody)));
  let claims: JWTPayload;
  try {
    ({ payload: claims } = await jwtVerify(token, keys, { issuer, algorithms: ["RS256"], currentDate: new Date(p.now()), clockTolerance: 0 }));
  } catch (err) {
    throw new OAuthError("invalid_grant", `${name} is not a valid ID token of this issuer (${(err as Error).message})`);
  }
  if (typeof claims.sub !== "string" || claims.exp === undefined) throw new OAuthError("invalid_grant", `${name} has no sub or exp`);
  // The login behind the subject: from a live session of it at this issuer (the ID token was
  // issued in one). None left: the user has logged out, and the ID token is no longer honored.
  const now = p.now();
  const session = (await p.state.groupEntries<SessionRecord>("session", claims.sub)).find(([, s]) => s.expires_at > now)?.[1];
  if (!session) throw new OAuthError("invalid_grant", `${name}: the subject has no session at this issuer any more (logged out)`);
  return { sub: claims.sub, login: session.login, expires_at: claims.exp * 1000 };
}

async function presented(input: ExchangeInput, token: string, type: string, name: string): Promise<Presented> {
  const { p } = input;
  if (type === TOKEN_TYPE.id_token) return presentedIdToken(p, token, input.issuer, name);
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
  return out;
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
  if (client.secret === undefined) throw new OAuthError("unauthorized_client", "token exchange needs a confidential client");
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

  const accessToken = p.options.accessTokenFormat === "jwt" ? await signExchanged(p, input.issuer, record) : p.secret();
  await p.put("access_token", accessToken, record, { pruneAt: expiresAt, group: grantId });
  const response: TokenResponse & { issued_token_type: string } = {
    access_token: accessToken,
    issued_token_type: TOKEN_TYPE.access_token,
    token_type: "Bearer",
    expires_in: Math.max(0, Math.floor((expiresAt - now) / 1000)),
    scope,
  };
  return response;
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
  return (await p.keys()).sign(claims, undefined, "at+jwt");
}
