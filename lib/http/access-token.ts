/**
 * An access token for a local daemon (the session service's API and UI, the identity provider's
 * debug interface), as Jupyter has one: a program sends `Authorization: Bearer <token>`; a
 * browser opens the link the start banner prints once (`/?token=<token>`), which sets an
 * HttpOnly, SameSite=Strict cookie and redirects to the same URL without the token, so the
 * token never stays in the address bar or the history, and no other site's page can make the
 * browser send it (SameSite=Strict; the token itself it cannot know).
 *
 * Tokens are compared in constant time (Hono's `timingSafeEqual`: SHA-256 digests, then a
 * loop that does not stop at the first difference).
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { timingSafeEqual } from "hono/utils/buffer";
import { isLoopbackAddress } from "./client-address.ts";

/** The shortest token accepted: shorter ones are guessable over a LAN. */
export const MIN_TOKEN_LENGTH = 16;

/** Why `token` cannot be an access token, or undefined when it can. */
export function accessTokenProblem(token: string): string | undefined {
  if (token.length < MIN_TOKEN_LENGTH) return `must be at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`;
  if (!/^[\x21-\x7e]+$/.test(token)) return "must be printable ASCII without spaces";
  return undefined;
}

/** Whether a daemon listening on `hostname` can be reached from other machines (`0.0.0.0`, `::`,
 * a LAN address): then it must not start without a token. */
export const listensBeyondLoopback = (hostname: string) => !(isLoopbackAddress(hostname) || hostname.toLowerCase() === "localhost");

export interface AccessTokenOptions {
  token: string;
  /** The cookie the link sets. One name per service: a browser sends a host's cookies to every
   * port of it. */
  cookie: string;
  /** The answer without a valid token; `presented` says whether a wrong one came. The caller
   * builds it (its error shape) with `challenge(presented)` as `WWW-Authenticate`. */
  deny(c: Context, presented: boolean): Response;
  /** Requests that need no token (a health check). */
  open?(c: Context): boolean;
}

/** `WWW-Authenticate` for a 401: RFC 6750's `invalid_token` when a wrong token came. */
export const challenge = (realm: string, presented: boolean) => `Bearer realm="${realm}"${presented ? ', error="invalid_token"' : ""}`;

/** The token a request presents: `Authorization: Bearer`, else the cookie. */
export function presentedToken(c: Context, cookie: string): string | undefined {
  const header = c.req.header("authorization");
  const bearer = header === undefined ? undefined : /^Bearer +(\S+) *$/i.exec(header)?.[1];
  return bearer ?? getCookie(c, cookie);
}

export const tokenMatches = (given: string | undefined, token: string): Promise<boolean> =>
  given === undefined ? Promise.resolve(false) : timingSafeEqual(given, token);

/** The middleware: the sign-in link, then the token on every request it guards. */
export function requireAccessToken(options: AccessTokenOptions): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    const fromLink = url.searchParams.get("token");
    if (fromLink !== null && (c.req.method === "GET" || c.req.method === "HEAD")) {
      if (!(await tokenMatches(fromLink, options.token))) return options.deny(c, true);
      setCookie(c, options.cookie, options.token, { httpOnly: true, sameSite: "Strict", path: "/", secure: url.protocol === "https:" });
      url.searchParams.delete("token");
      // Relative, and one leading slash only (`//evil.example/` would be another site): the browser
      // stays on the origin it asked, whatever the Host header or the path claimed.
      return c.redirect(`/${url.pathname.replace(/^[/\\]+/, "")}${url.search}`, 302);
    }
    if (options.open?.(c)) return next();
    const given = presentedToken(c, options.cookie);
    if (!(await tokenMatches(given, options.token))) return options.deny(c, given !== undefined);
    await next();
  };
}
