/**
 * Who may use the API and the web UI (docs/sessions.md, "Access token").
 *
 * With a token, every request presents it (`Authorization: Bearer`, or the cookie the banner's
 * link sets: lib/http/access-token.ts), except `GET /api/v1/health`, which stays open so a
 * supervisor can probe the daemon without the secret (it tells nothing but "running"). Without
 * one, whoever can connect may use it: on Node and Deno the command line listens beyond loopback
 * only with a token. Where the app cannot know who can connect (workerd: a deployed Worker is
 * reachable from anywhere), `loopbackOnly` answers only loopback callers when there is no token.
 */
import type { Context, Hono } from "hono";
import { challenge, clientAddress, errorEnvelope, isLoopbackAddress, requireAccessToken } from "#lib/http";

export interface SessionsAccess {
  /** The access token; none: no token is asked for. */
  token?: string;
  /** Without a token, refuse every caller but loopback ones (workerd). */
  loopbackOnly?: boolean;
}

/** The cookie the sign-in link sets (one per service: a browser sends it to every port). */
const ACCESS_COOKIE = "sessions_token";
const REALM = "sessions";
const HEALTH = "/api/v1/health";

const isHealthCheck = (c: Context) => c.req.path === HEALTH && (c.req.method === "GET" || c.req.method === "HEAD");

function unauthorized(c: Context, message: string, presented: boolean): Response {
  return c.json(errorEnvelope("UNAUTHORIZED", message), 401, { "WWW-Authenticate": challenge(REALM, presented) });
}

export function registerAccess(app: Hono, access: SessionsAccess): void {
  if (access.token !== undefined) {
    app.use(requireAccessToken({
      token: access.token,
      cookie: ACCESS_COOKIE,
      open: isHealthCheck,
      deny: (c, presented) =>
        unauthorized(
          c,
          presented
            ? "the access token is wrong"
            : "an access token is needed: send Authorization: Bearer <token>, or open the link the daemon printed when it started",
          presented,
        ),
    }));
  } else if (access.loopbackOnly) {
    app.use(async (c, next) => {
      if (isHealthCheck(c) || isLoopbackAddress(clientAddress(c))) return next();
      return unauthorized(c, "this session service has no access token, so it answers only loopback callers: set SESSIONS_AUTH_TOKEN", false);
    });
  }
}
