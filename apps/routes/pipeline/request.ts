/**
 * The first stage of every planned route: the request's state (its cookies, the host session) for
 * the stages after it; on the way out, the session cookie for a new session that something used,
 * and `no-store` on whatever a signed-in actor gets (Back after sign-out must not show it).
 */
import type { Context } from "hono";
import type { RoutePlan } from "../core/plan.ts";
import { setsCookie } from "../core/reply.ts";
import { cookieMap } from "../core/request.ts";
import { noStore } from "../core/error-page.ts";
import { withEditedHeaders } from "#lib/http";
import type { PipelineEnv, PipelineState, Stage, StageDeps } from "./state.ts";

const noAudit = () => {};

/** Puts `response` in place of the context's (Hono's setter would merge the old one's headers in). */
function replaceResponse(c: Context<PipelineEnv>, response: Response): void {
  if (response === c.res) return;
  c.res = undefined;
  c.res = response;
}

export function requestStage(plan: RoutePlan, deps: Pick<StageDeps, "sessions">): Stage {
  return async (c, next) => {
    const request = c.req.raw;
    const cookies = cookieMap(request.headers);
    const state: PipelineState = {
      plan,
      requestId: c.env.requestId,
      // As the entry saw it: the socket's peer, or what its trusted proxy setting believes
      // (lib/http/trusted-proxy.ts); never a header a client could write itself.
      ip: c.env.clientAddress ?? "",
      url: new URL(request.url),
      params: c.req.param() as Record<string, string>,
      cookies,
      session: await deps.sessions.read(cookies, request.headers.get("cookie")),
      sessionUsed: false,
      actor: null,
      resources: {},
      allowed: false,
      audit: noAudit,
    };
    c.set("pipeline", state);
    await next();
    let response = c.res;
    // A handler that issued a session cookie of its own (sign-in renews the id) keeps it.
    if (!c.error && state.sessionUsed && state.session.isNew && !setsCookie(response, deps.sessions.cookieName)) {
      const cookie = await deps.sessions.issue(state.session, state.url.protocol === "https:");
      response = withEditedHeaders(response, (h) => h.append("set-cookie", cookie));
    }
    if (state.actor) response = noStore(response);
    replaceResponse(c, response);
  };
}
