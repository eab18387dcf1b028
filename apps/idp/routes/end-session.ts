/**
 * RP-initiated logout. `id_token_hint` names the subject whose sessions all end, so it is trusted
 * only once verified as an ID token this issuer signed (OpenID RP-Initiated Logout 1.0 §2, §4):
 * otherwise a forged or borrowed hint, even an <img> on any page, would sign a user out
 * everywhere. The caller's own session ends too. The session cookie is cleared on every answer.
 */
import type { Context, Hono } from "hono";
import { deleteCookie } from "hono/cookie";
import { postLogoutUriAllowed } from "../domain/clients.ts";
import { endSessions } from "../domain/backchannel.ts";
import { frameSources, frontchannelFrames } from "../domain/frontchannel.ts";
import { frontchannelLogoutPage } from "../pages/frontchannel.ts";
import { PageError } from "../domain/errors.ts";
import type { Provider } from "../domain/provider.ts";
import { verifyOwnIdToken } from "../domain/signed-jwt.ts";
import { messagePage } from "../pages/layout.ts";
import { currentSession, PAGE_HEADERS, type Params, readForm, redirectWith, toParams, withQuery } from "./http.ts";

/**
 * The subject of `id_token_hint`: an ID token of the issuer that handles the request (signed with
 * its keys, RS256, `typ` "JWT"), for `client_id` when one is sent. It may have expired (§2). Checked
 * before anything ends, so a refused hint ends no session.
 */
async function verifiedHint(p: Provider, hint: string, issuer: string, clientId: string | undefined): Promise<{ sub: string; audience: string[] }> {
  const verified = await verifyOwnIdToken(await p.keys(), hint, { issuer, audience: clientId });
  if (!verified.ok) throw new PageError(400, "Invalid logout request", `id_token_hint is not an ID token of this issuer (${verified.reason})`);
  const aud = verified.payload.aud;
  return { sub: verified.payload.sub!, audience: aud === undefined ? [] : Array.isArray(aud) ? aud : [aud] };
}

async function checkPostLogoutUri(p: Provider, uri: string, clientId: string | undefined, hintAudience: string[]): Promise<void> {
  if (clientId !== undefined) {
    const client = await p.findClient(clientId);
    if (!client) throw new PageError(400, "Invalid logout request", `client "${clientId}" is not registered`);
    if (!postLogoutUriAllowed(client, uri)) {
      throw new PageError(400, "Invalid logout request", `post_logout_redirect_uri is not registered for client "${clientId}"`);
    }
    return;
  }
  for (const client of p.clients.values()) if (postLogoutUriAllowed(client, uri)) return;
  // A registered client (RFC 7591) counts only when the verified hint was issued to it: anyone may
  // register a client, and its URIs would otherwise make this an open redirect for every caller.
  for (const aud of hintAudience) {
    const client = p.clients.has(aud) ? undefined : await p.findClient(aud);
    if (client && postLogoutUriAllowed(client, uri)) return;
  }
  throw new PageError(400, "Invalid logout request", "post_logout_redirect_uri is not registered for any client");
}

async function endSession(c: Context, p: Provider, params: Params): Promise<Response> {
  deleteCookie(c, p.sessionCookie, { path: "/", httpOnly: true, sameSite: "Lax" });
  if (params.duplicates.length > 0) throw new PageError(400, "Invalid logout request", `parameter repeated: ${params.duplicates.join(", ")}`);
  const v = params.values;
  const hint = v.get("id_token_hint");
  const verified = hint === undefined ? undefined : await verifiedHint(p, hint, p.issuerFor(c.req.url), v.get("client_id"));
  const sub = verified?.sub;
  const target = v.get("post_logout_redirect_uri");
  // Without client_id, against every configured client's URIs, as the contract says; a registered client's only for a hint issued to it.
  if (target !== undefined) await checkPostLogoutUri(p, target, v.get("client_id"), verified?.audience ?? []);
  else if (v.get("client_id") !== undefined && !(await p.findClient(v.get("client_id")!))) {
    throw new PageError(400, "Invalid logout request", `client "${v.get("client_id")}" is not registered`);
  }
  const own = await currentSession(c, p);
  // Read before the session ends: ending it takes the clients' records.
  const frames = await frontchannelFrames(p, own?.session.sid);
  // Sessions are grouped by subject; clients with a back-channel logout URI hear of each.
  await endSessions(p, own ? [own] : [], sub);
  if (frames.length > 0) {
    // The page frames exactly these URIs (and is itself never framed).
    const next = target === undefined ? undefined : withQuery(target, { state: v.get("state") });
    const csp = `frame-ancestors 'none'; frame-src ${frameSources(frames).join(" ")}`;
    return c.html(frontchannelLogoutPage({ frames, next }), 200, { ...PAGE_HEADERS, "Content-Security-Policy": csp });
  }
  if (target !== undefined) return redirectWith(c, target, { state: v.get("state") });
  return c.html(messagePage("Logged out", "You are logged out of the identity provider.", "logged-out"), 200, PAGE_HEADERS);
}

export function registerEndSession(app: Hono, p: Provider): void {
  app.get("/end-session", (c) => endSession(c, p, toParams(new URL(c.req.url).searchParams)));
  app.post("/end-session", async (c) => {
    const form = await readForm(c);
    if (!form) {
      deleteCookie(c, p.sessionCookie, { path: "/" });
      throw new PageError(400, "Invalid logout request", "the body must be application/x-www-form-urlencoded");
    }
    return endSession(c, p, form);
  });
}
