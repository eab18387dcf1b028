/**
 * CORS for browser clients (hono/cors) on the endpoints a single-page app calls with fetch:
 * discovery, the key set, token, userinfo, revocation and device authorization. Never on the
 * pages a browser navigates to (authorize and its login page, end-session, the device page,
 * debug): those are not read by scripts.
 *
 * An allowed origin (domain/cors.ts) gets `Access-Control-Allow-Origin: <origin>` and `Vary:
 * Origin`; a preflight (`OPTIONS`) answers 204 with the methods, the request headers a client
 * sends (authorization, content-type, dpop) and how long to keep the answer. A cross-origin POST
 * from an origin that is not allowed is refused before anything is read or spent: the page could
 * not read the answer, so it must not cost a code, a refresh token or a device grant.
 *
 * Discovery and the key set take their headers from `corsHeaders` inside their handlers rather
 * than from the middleware: a request that matches one handler alone is answered synchronously
 * (the fast path that relying parties' key fetches hit); their preflights still go to hono/cors.
 */
import type { Context, Hono, MiddlewareHandler, Next } from "hono";
import { cors } from "hono/cors";
import { CorsPolicy } from "../domain/cors.ts";
import type { Client } from "../domain/clients.ts";
import { OAuthError } from "../domain/errors.ts";
import type { Provider } from "../domain/provider.ts";

/** The endpoints a page may call, with their methods. */
export const CORS_ENDPOINTS: Record<string, string[]> = {
  "/.well-known/openid-configuration": ["GET"],
  "/jwks": ["GET"],
  "/token": ["POST"],
  "/userinfo": ["GET", "POST"],
  "/revoke": ["POST"],
  "/device_authorization": ["POST"],
};

/** Endpoints whose POST spends or creates something: refused to an origin that is not allowed. */
const SPENDING = new Set(["/token", "/revoke", "/device_authorization"]);
/** Answered by their own handlers, with `corsHeaders` (see above). */
const IN_HANDLER = new Set(["/.well-known/openid-configuration", "/jwks"]);
const ALLOW_HEADERS = ["authorization", "content-type", "dpop"];
const EXPOSE_HEADERS = ["WWW-Authenticate", "DPoP-Nonce"];
/** Seconds a browser may keep a preflight's answer. */
const MAX_AGE = 600;

/** One policy per set of clients (issuers by path share their clients with the configured one). */
const policies = new WeakMap<Map<string, Client>, CorsPolicy>();

function corsPolicy(p: Provider): CorsPolicy {
  let policy = policies.get(p.clients);
  if (!policy) {
    policy = new CorsPolicy(p.clients.values(), p.options.corsOrigins);
    policies.set(p.clients, policy);
  }
  return policy;
}

/** The request's own origin, or the issuer's (a proxy in front may change the first). */
function sameOrigin(c: Context, p: Provider, origin: string): boolean {
  return origin === new URL(c.req.url).origin || origin === new URL(p.issuerFor(c.req.url)).origin;
}

/**
 * Is `origin` the origin of a redirect URI of a client registered at this issuer (RFC 7591)?
 * Asked only for an Origin no configured client allows, and read from the store then.
 */
async function registeredAllows(p: Provider, origin: string): Promise<boolean> {
  if (p.options.registration === "off") return false;
  return new CorsPolicy(await p.registeredClients()).allows(origin);
}

export function registerCors(app: Hono, p: Provider): void {
  const policy = corsPolicy(p);
  const allowed = (origin: string): string | null | Promise<string | null> =>
    policy.allows(origin) ? origin : registeredAllows(p, origin).then((yes) => (yes ? origin : null));
  for (const [path, methods] of Object.entries(CORS_ENDPOINTS)) {
    const withCors = cors({ origin: allowed, allowMethods: methods, allowHeaders: ALLOW_HEADERS, exposeHeaders: EXPOSE_HEADERS, maxAge: MAX_AGE });
    // A request without Origin is no browser's cross-origin call: hono/cors would only add Vary
    // to an answer that is no-store anyway, and rebuilding the answer to add it halved
    // client_credentials' rate (bench:idp). Preflights always carry Origin.
    const headers: MiddlewareHandler = (c, next) => (c.req.header("origin") === undefined ? next() : withCors(c, next));
    const guarded: MiddlewareHandler = SPENDING.has(path)
      ? (c: Context, next: Next) => {
        const origin = c.req.header("origin");
        if (origin === undefined || c.req.method !== "POST" || policy.allows(origin) || sameOrigin(c, p, origin)) return headers(c, next);
        // Not a configured client's origin: perhaps a registered client's (read from the store).
        return registeredAllows(p, origin).then((yes) => {
          if (yes) return headers(c, next);
          p.logger.warn("cross-origin request refused", { origin, path: c.req.path });
          throw new OAuthError(
            "invalid_request",
            `origin ${origin} may not call this endpoint: register a redirect URI on it, or add it to cors-origins (IDP_CORS_ORIGINS)`,
            403,
          );
        });
      }
      : headers;
    if (IN_HANDLER.has(path)) app.options(path, headers);
    else app.use(path, guarded);
  }
}

/**
 * The CORS headers of an answer, with `base` (what hono/cors would add to a GET, computed
 * synchronously): the answer without an allowed Origin is the same object every time.
 */
export function corsHeaders(p: Provider, base: Record<string, string>): (c: Context) => Record<string, string> | Promise<Record<string, string>> {
  const plain = { ...base, Vary: "Origin" };
  const expose = EXPOSE_HEADERS.join(",");
  const allowing = (origin: string) => ({ ...plain, "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": expose });
  return (c) => {
    const origin = c.req.header("origin");
    if (origin === undefined) return plain;
    if (corsPolicy(p).allows(origin)) return allowing(origin);
    // A registered client's origin: known only from the store (a promise only in this case).
    return registeredAllows(p, origin).then((yes) => (yes ? allowing(origin) : plain));
  };
}

/** Answers with headers that may still be on their way (corsHeaders), synchronously when they are not. */
export function answerWith<T>(
  headers: Record<string, string> | Promise<Record<string, string>>,
  answer: (headers: Record<string, string>) => T | Promise<T>,
): T | Promise<T> {
  return headers instanceof Promise ? headers.then(answer) : answer(headers);
}
