/**
 * Stage 2, authenticate (routes that are not public): the authenticator's actor. Credentials that
 * are present but invalid are 401 with its challenge; none at all on a route that requires an
 * actor is 401 too, except for a browser asking for a page, which is sent to sign in.
 */
import type { RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import { AuthenticationError, type Authenticator } from "../core/services.ts";
import { pipeOf, type Stage, stateOf } from "./state.ts";

export function authenticateStage(plan: RoutePlan, authenticator: Authenticator): Stage {
  return async (c, next) => {
    const state = stateOf(c);
    const pipe = pipeOf(state);
    try {
      state.actor = (await authenticator.authenticate(pipe)) ?? null;
    } catch (err) {
      if (!(err instanceof AuthenticationError)) throw err;
      const challenge = authenticator.challenge?.(pipe, err);
      throw new HostReply(401, "UNAUTHENTICATED", err.message, challenge ? { "www-authenticate": challenge } : {}, err.code);
    }
    if (!state.actor && plan.auth?.required) {
      const request = c.req.raw;
      const page = request.method === "GET" && (request.headers.get("accept") ?? "").includes("text/html");
      const signIn = page ? authenticator.signInUrl?.(pipe) : undefined;
      if (signIn) {
        state.deniedWith = "no_credentials";
        state.sessionUsed = true; // the sign-in comes back to this browser's session
        return new Response(null, { status: 302, headers: { location: signIn, "cache-control": "no-store" } });
      }
      const challenge = authenticator.challenge?.(pipe);
      throw new HostReply(401, "UNAUTHENTICATED", "this route needs credentials", challenge ? { "www-authenticate": challenge } : {}, "no_credentials");
    }
    await next();
  };
}
