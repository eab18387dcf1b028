/**
 * OpenID Connect Back-Channel Logout 1.0. A client with a `backchannel_logout_uri` that got tokens
 * in an IdP session (a code redeemed at /token) is remembered for that session (`logout_client`
 * records, grouped by the session's `sid`, which ID tokens carry). When the session ends, each
 * such client gets a signed logout token POSTed to its URI:
 *
 * - at /end-session (the caller's session, and every session of the `id_token_hint` subject),
 * - when a new login replaces the browser's session,
 * - from the debug interface (POST /debug/sessions/end, POST /debug/reset),
 * - when the session expires by the provider clock: noticed when the clock is moved
 *   (POST /debug/clock), when the debug interface lists state, and at the amortised pruning of
 *   expired state (every 64 writes). Not at the exact instant of expiry: nothing runs then.
 *
 * Ending a session also revokes the tokens tied to it (those exchanged for its ID tokens,
 * `sessionGrantId`).
 *
 * Delivery never blocks or breaks logout: each POST has a timeout, a failure is logged. Where the
 * runtime keeps work going after the response (Node, Deno, a Durable Object) the POSTs run after
 * it; where it may not (a module Worker) the request awaits them (Provider.deliver).
 */
import { idTokenAlg } from "./algorithms.ts";
import { hasFrontchannelUri } from "./frontchannel.ts";
import { sessionGrantId } from "./grant-ids.ts";
import type { Provider } from "./provider.ts";
import { LIFETIME_MS, type LogoutClientRecord, type SessionRecord } from "./records.ts";

const BACKCHANNEL_EVENT = "http://schemas.openid.net/event/backchannel-logout";
/** How long one delivery may take (env IDP_BACKCHANNEL_TIMEOUT_MS). */
const DEFAULT_BACKCHANNEL_TIMEOUT_MS = 5000;
/** Lifetime of a logout token (`exp` - `iat`). */
const LOGOUT_TOKEN_S = 120;

const registrationKey = (sid: string, clientId: string) => `${sid} ${clientId}`;

/** Revokes the tokens tied to these sessions (sessionGrantId). */
function revokeSessionTokens(p: Provider, sessions: SessionRecord[]): Promise<void>[] {
  const sids = new Set(sessions.flatMap((s) => (s.sid === undefined ? [] : [s.sid])));
  return [...sids].map((sid) => p.state.deleteGroup(["access_token"], sessionGrantId(sid)));
}

/**
 * Remembers that `clientId` got tokens in session `sid`, when it has a back-channel or a
 * front-channel logout URI (frontchannel.ts; nothing is written for other clients).
 */
export async function rememberLogoutClient(p: Provider, r: { iss: string; sid?: string; sub: string; client_id: string; auth_time: number }): Promise<void> {
  if (r.sid === undefined) return;
  if ((await p.backchannelLogoutUri(r.client_id)) === undefined && !(await hasFrontchannelUri(p, r.client_id))) return;
  const record: LogoutClientRecord = { iss: r.iss, sid: r.sid, sub: r.sub, client_id: r.client_id, expires_at: r.auth_time + LIFETIME_MS.session };
  await p.put("logout_client", registrationKey(r.sid, r.client_id), record, { group: r.sid });
}

/** Takes (single use across instances) the registrations of these sessions and notifies their clients. */
async function notifySessions(p: Provider, sids: Iterable<string>): Promise<void> {
  const taken: LogoutClientRecord[] = [];
  for (const sid of new Set(sids)) {
    for (const [key, record] of await p.state.groupEntries<LogoutClientRecord>("logout_client", sid)) {
      if (await p.state.take("logout_client", key, record)) taken.push(record);
    }
  }
  if (taken.length > 0) await p.deliver(Promise.all(taken.map((r) => postLogoutToken(p, r))).then(() => {}));
}

/**
 * Ends these sessions and every session of `sub` (when given), revokes the tokens tied to them,
 * and notifies the clients that got tokens in them.
 */
export async function endSessions(p: Provider, known: { id: string; session: SessionRecord }[], sub?: string): Promise<void> {
  const sessions = known.map(({ session }) => session);
  if (sub !== undefined) sessions.push(...(await p.state.groupEntries<SessionRecord>("session", sub)).map(([, s]) => s));
  await Promise.all([
    ...known.map(({ id }) => p.state.delete("session", id)),
    sub === undefined ? undefined : p.state.deleteGroup(["session"], sub),
    ...revokeSessionTokens(p, sessions),
  ]);
  await notifySessions(p, sessions.flatMap((s) => (s.sid === undefined ? [] : [s.sid])));
}

/** Ends every session of one subject at this issuer (the debug interface), notifying clients. Returns how many live ones ended. */
export async function endSubjectSessions(p: Provider, sub: string): Promise<number> {
  const now = p.now();
  const count = (await p.state.groupEntries<SessionRecord>("session", sub)).filter(([, s]) => s.expires_at > now).length;
  await endSessions(p, [], sub);
  return count;
}

/** Ends every session of this issuer (the debug interface), notifying clients. Returns how many live ones ended. */
export async function endAllSessions(p: Provider): Promise<number> {
  const sessions = await p.state.entries<SessionRecord>("session");
  await Promise.all([...sessions.map(([id]) => p.state.delete("session", id)), ...revokeSessionTokens(p, sessions.map(([, s]) => s))]);
  await notifySessions(p, sessions.flatMap(([, s]) => (s.sid === undefined ? [] : [s.sid])));
  const now = p.now();
  return sessions.filter(([, s]) => s.expires_at > now).length;
}

/**
 * Notifies the clients of sessions that have expired by the provider clock, at every issuer of
 * the store (the registrations carry their issuer). Of several instances, the one that takes a
 * registration sends its token.
 */
export async function notifyExpiredSessions(p: Provider, everything = false): Promise<void> {
  const now = p.now();
  const due: LogoutClientRecord[] = [];
  for (const [key, record] of await p.store.entries<LogoutClientRecord>("logout_client")) {
    if ((everything || record.expires_at <= now) && (await p.store.take("logout_client", key, record))) due.push(record);
  }
  if (due.length > 0) await p.deliver(Promise.all(due.map((r) => postLogoutToken(p, r))).then(() => {}));
}

/** Signs a logout token (typ logout+jwt, no nonce) for one client, with its ID tokens' algorithm. */
export async function logoutToken(p: Provider, r: LogoutClientRecord): Promise<string> {
  const iat = Math.floor(p.now() / 1000);
  const claims = {
    iss: r.iss,
    sub: r.sub,
    aud: r.client_id,
    iat,
    exp: iat + LOGOUT_TOKEN_S,
    jti: p.secret(),
    sid: r.sid,
    events: { [BACKCHANNEL_EVENT]: {} },
  };
  return (await p.keys()).sign(claims, undefined, "logout+jwt", idTokenAlg(await p.findClient(r.client_id)));
}

/** POSTs the logout token; a failure (refused, an error status, the timeout) is logged, never thrown. */
async function postLogoutToken(p: Provider, r: LogoutClientRecord): Promise<void> {
  const uri = await p.backchannelLogoutUri(r.client_id);
  if (uri === undefined) return;
  try {
    const body = new URLSearchParams({ logout_token: await logoutToken(p, r) });
    const res = await fetch(uri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(p.options.backchannelTimeoutMs ?? DEFAULT_BACKCHANNEL_TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (!res.ok) p.logger.warn("back-channel logout refused", { client_id: r.client_id, uri, status: res.status });
  } catch (err) {
    p.logger.warn("back-channel logout failed", { client_id: r.client_id, uri, error: (err as Error).message });
  }
}
