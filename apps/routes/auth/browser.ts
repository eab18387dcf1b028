/**
 * Browser sign-in: the authorization code flow with PKCE against an OIDC issuer (our identity
 * provider by default), the actor then kept with the host session.
 *
 *   GET /auth/login?return_to=/path   state, nonce, PKCE verifier and return_to in a signed,
 *                                     short-lived cookie (`routes_signin`, Path=/auth); redirect
 *                                     to the issuer. Nothing is stored: anonymous requests cost
 *                                     the host no memory and cannot push anyone out.
 *   GET /auth/callback?code&state     the cookie's state must match (single use: the cookie is
 *                                     cleared); the code is exchanged, the ID token verified
 *                                     (signature, iss, aud, nonce); a fresh session id and cookie
 *                                     are issued (a session planted before sign-in is never
 *                                     signed in), and the browser goes to return_to
 *   GET|POST /auth/logout             forgets the actor, issues a fresh session id; RP-initiated
 *                                     logout at the issuer when it has an end_session_endpoint
 *
 * Signed-in sessions live in a SignedInStore (auth/signed-in.ts): memory, or the host's database,
 * where they survive a restart. The authenticator it gives takes the session's actor when the
 * request has no Authorization header, so a browser with a session cookie and a program with a
 * bearer token reach the same routes.
 */
import { parseSigned, serializeSigned } from "hono/utils/cookie";
import { FRAME_DENY } from "#lib/http";
import { loadJose, sha256Base64url } from "#lib/oauth";
import type { HostPlannedContext, RouteHost } from "../host/host.ts";
import { type Actor, AuthenticationError, type Authenticator, type PipelineRequest } from "../core/services.ts";
import { randomHex, type SessionCookieOptions, sessionCookies } from "../core/session.ts";
import { actorFromClaims } from "./bearer.ts";
import { basicAuth, issuerMetadata } from "./issuer.ts";
import { memorySignedInStore, type SignedInStore } from "./signed-in.ts";

interface BrowserSignInOptions {
  issuer: string;
  /** Default `public-spa`: our identity provider's public client for an app on this machine. */
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  /** The host session cookie (the same secret and name the host uses): sign-in and sign-out
   * issue a fresh one; the pre-login cookie is signed with a key derived from the secret. */
  sessionCookie: SessionCookieOptions;
  /** Where signed-in sessions live (default: memory). */
  store?: SignedInStore;
  fetch?: typeof fetch;
  now?: () => number;
  /** How long a signed-in session lasts, ms (default 8 h). */
  sessionMs?: number;
  /** At most `limit` requests to the `/auth/*` routes every `windowSeconds` from one address
   * (one counter for all of them: brute force, callback floods); unset: no limit. */
  rateLimit?: { limit: number; windowSeconds: number };
}

/** The counter the sign-in routes share, and its name in `RateLimit-Policy`. */
const SIGN_IN_RATE_BUCKET = "sign-in";

/** The plan of a sign-in route: public, with the host's sign-in limit when it has one. */
function signInPlan(method: string, pattern: string, rateLimit: BrowserSignInOptions["rateLimit"]) {
  return { method, pattern, public: true, ...(rateLimit ? { rateLimits: [{ ...rateLimit, key: "ip" as const, bucket: SIGN_IN_RATE_BUCKET }] } : {}) };
}

/** Our identity provider's public client for an app on this machine. */
export const DEFAULT_CLIENT_ID = "public-spa";
/** The pre-login cookie: state, nonce, PKCE verifier and return_to of one sign-in attempt. */
export const SIGNIN_COOKIE = "routes_signin";

const PENDING_MS = 10 * 60_000;
// Control characters (a browser drops tab, CR and LF from a URL, and a header cannot carry them)
// and backslashes (a browser reads `\` as `/`) never make it into a redirect.
// deno-lint-ignore no-control-regex
const UNSAFE_RETURN = /[\u0000-\u001f\u007f\\]/;
/** The longest `return_to` kept. The pre-login cookie carries it encoded once more (up to three
 * times as long: `/` is `%2F`), and a browser drops a cookie over 4 KB without a word, which
 * would fail the sign-in at the callback every time. */
export const MAX_RETURN_TO = 1024;

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  expires: number;
}

/**
 * Where to go after sign-in: `value` resolved by the URL parser against this host's `origin`,
 * kept only when it stays on that origin, has no control character, and is at most
 * MAX_RETURN_TO characters once resolved; else "/". The result is a path that starts with
 * exactly one "/" (never `//host`, which a browser reads as another origin).
 */
export function safeReturnTo(value: string | null | undefined, origin: string): string {
  if (!value || UNSAFE_RETURN.test(value)) return "/";
  let url: URL;
  try {
    url = new URL(value, `${origin}/`);
  } catch {
    return "/";
  }
  const target = `${url.pathname}${url.search}${url.hash}`;
  if (url.origin !== origin || url.pathname.startsWith("//") || target.length > MAX_RETURN_TO) return "/";
  return target;
}

export function createBrowserSignIn(options: BrowserSignInOptions) {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const now = options.now ?? Date.now;
  const clientId = options.clientId ?? DEFAULT_CLIENT_ID;
  const scope = options.scope ?? "openid profile email";
  const sessionMs = options.sessionMs ?? 8 * 3600_000;
  const metadata = issuerMetadata(options.issuer, { fetch: doFetch });
  const store = options.store ?? memorySignedInStore({ now });
  const { secure } = options.sessionCookie;
  // A key of its own for the pre-login cookie, so its value is never taken for a session id.
  const secret = `${options.sessionCookie.secret}:signin`;
  const hostCookies = sessionCookies(options.sessionCookie);
  // Secure when configured so, or when the request came over https (its URL's scheme).
  const pendingCookie = (raw: Request) => ({ path: "/auth", httpOnly: true, sameSite: "Lax", secure: secure || raw.url.startsWith("https:") }) as const;

  const redirect = (location: string, cookies: string[] = []) => {
    const headers = new Headers({ location, "cache-control": "no-store" });
    for (const c of cookies) headers.append("set-cookie", c);
    return new Response(null, { status: 302, headers });
  };
  const page = (status: number, message: string, cookies: string[] = []) => {
    const headers = new Headers({ "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...FRAME_DENY });
    for (const c of cookies) headers.append("set-cookie", c);
    return new Response(`<!doctype html><title>sign-in</title><p>${message.replace(/[<&>"]/g, "")}</p><p><a href="/auth/login">Sign in again</a></p>`, {
      status,
      headers,
    });
  };
  const clearPending = (raw: Request) => serializeSigned(SIGNIN_COOKIE, "", secret, { ...pendingCookie(raw), maxAge: 0 });

  async function readPending(raw: Request): Promise<Pending | undefined> {
    const header = raw.headers.get("cookie");
    if (!header?.includes(SIGNIN_COOKIE)) return undefined;
    const value = (await parseSigned(header, secret, SIGNIN_COOKIE))[SIGNIN_COOKIE];
    if (typeof value !== "string" || value === "") return undefined;
    try {
      const p = JSON.parse(value) as Pending;
      return typeof p.state === "string" && typeof p.expires === "number" && p.expires > now() ? p : undefined;
    } catch {
      return undefined;
    }
  }

  /** A fresh host session id, and the cookie that hands it to the browser. */
  async function freshSession(raw: Request): Promise<{ id: string; cookie: string }> {
    const id = crypto.randomUUID();
    return { id, cookie: await hostCookies.issue({ id, isNew: true, cookieName: hostCookies.cookieName }, raw.url.startsWith("https:")) };
  }

  const authenticator: Authenticator = {
    async authenticate(req: PipelineRequest) {
      const session = req.script.session;
      if (!session || session.isNew) return null;
      return (await store.get(session.id))?.actor ?? null;
    },
    challenge: () => `Bearer realm="routes"`,
    signInUrl: (req) => `/auth/login?return_to=${encodeURIComponent(req.script.path + new URL(req.request.url).search)}`,
  };

  /** The `/auth/*` routes, as public host routes. */
  function register(host: RouteHost): void {
    host.registerPlanned(signInPlan("GET", "/auth/login", options.rateLimit), async (ctx) => {
      const origin = new URL(ctx.raw.url).origin;
      const m = await metadata();
      if (!m.authorizationEndpoint) return page(500, "the issuer has no authorization endpoint");
      const returnTo = ctx.request.query.return_to;
      const pending: Pending = {
        state: randomHex(16),
        nonce: randomHex(16),
        verifier: randomHex(32),
        returnTo: safeReturnTo(typeof returnTo === "string" ? returnTo : undefined, origin),
        expires: now() + PENDING_MS,
      };
      const url = new URL(m.authorizationEndpoint);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: `${origin}/auth/callback`,
        scope,
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: await sha256Base64url(pending.verifier),
        code_challenge_method: "S256",
      }).toString();
      return redirect(url.href, [
        await serializeSigned(SIGNIN_COOKIE, JSON.stringify(pending), secret, { ...pendingCookie(ctx.raw), maxAge: PENDING_MS / 1000 }),
      ]);
    });

    host.registerPlanned(signInPlan("GET", "/auth/callback", options.rateLimit), async (ctx) => {
      const origin = new URL(ctx.raw.url).origin;
      const pending = await readPending(ctx.raw);
      const q = ctx.request.query;
      // Single use: whatever happens next, this sign-in attempt is spent.
      const spent = [await clearPending(ctx.raw)];
      if (!pending || typeof q.state !== "string" || q.state !== pending.state) {
        return page(400, "This sign-in link is not valid (or was used already).", spent);
      }
      if (typeof q.error === "string") {
        return page(401, `The identity provider said: ${q.error}${typeof q.error_description === "string" ? ` (${q.error_description})` : ""}`, spent);
      }
      if (typeof q.code !== "string") return page(400, "The identity provider sent no code.", spent);
      const m = await metadata();
      const body = new URLSearchParams({
        grant_type: "authorization_code",
        code: q.code,
        redirect_uri: `${origin}/auth/callback`,
        code_verifier: pending.verifier,
        client_id: clientId,
      });
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
      if (options.clientSecret) headers.authorization = basicAuth(clientId, options.clientSecret);
      const res = await doFetch(m.tokenEndpoint!, { method: "POST", headers, body: body.toString() });
      const tokens = (await res.json().catch(() => ({}))) as { id_token?: string; scope?: string; error?: string };
      if (!res.ok || !tokens.id_token) return page(401, `The code could not be exchanged${tokens.error ? `: ${tokens.error}` : ""}.`, spent);
      let claims: Record<string, unknown>;
      try {
        const { jwtVerify } = await loadJose();
        ({ payload: claims } = await jwtVerify(tokens.id_token, m.jwks, {
          issuer: m.issuer,
          audience: clientId,
          currentDate: new Date(now()),
          clockTolerance: 5,
        }));
      } catch (err) {
        return page(401, `The ID token is not valid: ${(err as Error).message}`, spent);
      }
      if (claims.nonce !== pending.nonce) return page(401, "The ID token is not for this sign-in (nonce).", spent);
      let actor: Actor;
      try {
        // The ID token's claims, and the scope granted to this sign-in (authorizers read it).
        actor = { ...actorFromClaims({ ...claims, scope: tokens.scope ?? scope }), kind: "user" };
      } catch (err) {
        if (err instanceof AuthenticationError) return page(401, err.message, spent);
        throw err;
      }
      // A new id for the signed-in session (OWASP: renew the session id at sign-in), so whoever
      // knew the id the browser came with knows nothing now. The old one is forgotten.
      const before = ctx.request.session;
      if (before && !before.isNew) await store.delete(before.id);
      const fresh = await freshSession(ctx.raw);
      await store.put(fresh.id, { actor, idToken: tokens.id_token, expires: now() + sessionMs });
      return redirect(safeReturnTo(pending.returnTo, origin), [...spent, fresh.cookie]);
    });

    const logout = async (ctx: HostPlannedContext) => {
      // Sign-out changes state: a request another site started (a link, an image, a form) is
      // answered with a page whose button signs out, never acted on. Browsers say where a request
      // comes from (Sec-Fetch-Site, and Origin on a POST); a program that says nothing is trusted.
      const origin = new URL(ctx.raw.url).origin;
      const site = ctx.raw.headers.get("sec-fetch-site");
      const from = ctx.raw.headers.get("origin");
      if ((site !== null && site !== "same-origin" && site !== "none") || (from !== null && from !== origin)) return confirmLogout();
      const session = ctx.request.session;
      const idToken = session && !session.isNew ? (await store.get(session.id))?.idToken : undefined;
      if (session && !session.isNew) await store.delete(session.id);
      // A fresh id after sign-out too: the signed-out id is never used again.
      const cookies = [(await freshSession(ctx.raw)).cookie];
      const m = await metadata().catch(() => undefined);
      if (!m?.endSessionEndpoint) return redirect("/", cookies);
      const url = new URL(m.endSessionEndpoint);
      url.search = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: origin, ...(idToken ? { id_token_hint: idToken } : {}) }).toString();
      return redirect(url.href, cookies);
    };
    // Sign-out is never limited: a flood from one address (or a NAT) must not keep a user signed in.
    host.registerPlanned(signInPlan("GET", "/auth/logout", undefined), logout);
    host.registerPlanned(signInPlan("POST", "/auth/logout", undefined), logout);
  }

  /** The page a cross-site sign-out request gets: a button that posts from this origin. */
  const confirmLogout = () =>
    new Response(
      `<!doctype html><meta charset="utf-8"><title>Sign out</title><p>Sign out of this site?</p><form method="post" action="/auth/logout"><button type="submit">Sign out</button></form><p><a href="/">Stay signed in</a></p>`,
      { status: 200, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...FRAME_DENY } },
    );

  return { authenticator, register };
}

/** A browser's session first, a program's `Authorization` header when there is one. */
export function sessionOrBearer(session: Authenticator, bearer: Authenticator): Authenticator {
  return {
    authenticate: (req) => (req.request.headers.has("authorization") ? bearer.authenticate(req) : session.authenticate(req)),
    challenge: (req, err) => bearer.challenge?.(req, err),
    signInUrl: (req) => session.signInUrl?.(req),
  };
}
