/**
 * RP-initiated logout. `id_token_hint` is decoded without verifying its signature (the spec says
 * so) to find the subject, whose sessions all end; the caller's own session ends too. The session
 * cookie is cleared on every answer.
 */
import type { Context, Hono } from "hono";
import { deleteCookie } from "hono/cookie";
import { postLogoutUriAllowed } from "../domain/clients.ts";
import { endSessions } from "../domain/backchannel.ts";
import { PageError } from "../domain/errors.ts";
import type { Provider } from "../domain/provider.ts";
import { loadJose } from "#lib/oauth";
import { messagePage } from "../pages/layout.ts";
import { currentSession, PAGE_HEADERS, type Params, readForm, redirectWith, toParams } from "./http.ts";

async function hintSubject(hint: string): Promise<string> {
  const { decodeJwt } = await loadJose();
  let sub: unknown;
  try {
    sub = decodeJwt(hint).sub;
  } catch {
    throw new PageError(400, "Invalid logout request", "id_token_hint is not a JWT");
  }
  if (typeof sub !== "string" || sub === "") throw new PageError(400, "Invalid logout request", "id_token_hint has no subject");
  return sub;
}

function checkPostLogoutUri(p: Provider, uri: string, clientId: string | undefined): void {
  if (clientId !== undefined) {
    const client = p.clients.get(clientId);
    if (!client) throw new PageError(400, "Invalid logout request", `client "${clientId}" is not registered`);
    if (!postLogoutUriAllowed(client, uri)) {
      throw new PageError(400, "Invalid logout request", `post_logout_redirect_uri is not registered for client "${clientId}"`);
    }
    return;
  }
  for (const client of p.clients.values()) if (postLogoutUriAllowed(client, uri)) return;
  throw new PageError(400, "Invalid logout request", "post_logout_redirect_uri is not registered for any client");
}

async function endSession(c: Context, p: Provider, params: Params): Promise<Response> {
  deleteCookie(c, p.sessionCookie, { path: "/", httpOnly: true, sameSite: "Lax" });
  if (params.duplicates.length > 0) throw new PageError(400, "Invalid logout request", `parameter repeated: ${params.duplicates.join(", ")}`);
  const v = params.values;
  const hint = v.get("id_token_hint");
  const sub = hint === undefined ? undefined : await hintSubject(hint);
  const target = v.get("post_logout_redirect_uri");
  if (target !== undefined) checkPostLogoutUri(p, target, v.get("client_id"));
  else if (v.get("client_id") !== undefined && !p.clients.has(v.get("client_id")!)) {
    throw new PageError(400, "Invalid logout request", `client "${v.get("client_id")}" is not registered`);
  }
  const own = await currentSession(c, p);
  // Sessions are grouped by subject; clients with a back-channel logout URI hear of each.
  await endSessions(p, own ? [own] : [], sub);
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
