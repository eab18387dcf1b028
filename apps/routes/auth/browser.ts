/**
 * Browser sign-in: the authorization code flow with PKCE against an OIDC issuer (our identity
 * provider by default), the actor then kept with the host session.
 *
 *   GET /auth/login?return_to=/path   state, nonce and PKCE verifier bound to the host session;
 *                                     redirect to the issuer
 *   GET /auth/callback?code&state     the state must match (single use); the code is exchanged,
 *                                     the ID token verified (signature, iss, aud, nonce); redirect
 *                                     to return_to (a path on this host only)
 *   GET|POST /auth/logout             forgets the actor; RP-initiated logout at the issuer when it
 *                                     has an end_session_endpoint
 *
 * Sessions live in memory (bounded, with expiry): a restart signs everyone out. The authenticator
 * it gives takes the session's actor when the request has no Authorization header, so a browser
 * with a session cookie and a program with a bearer token reach the same routes.
 */
import { loadJose, sha256Base64url } from "../../../lib/oauth/jose.ts";
import type { RouteHost } from "../host.ts";
import { AuthenticationError, type Actor, type Authenticator, type HostSession, type PipelineRequest } from "../services.ts";
import { actorFromClaims } from "./bearer.ts";
import { basicAuth, issuerMetadata } from "./issuer.ts";
import { randomHex } from "../session.ts";

export interface BrowserSignInOptions {
  issuer: string;
  /** Default `public-spa`: our identity provider's public client for an app on port 8080. */
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  fetch?: typeof fetch;
  now?: () => number;
  /** How long a signed-in session lasts, ms (default 8 h). */
  sessionMs?: number;
}

interface SessionData {
  actor?: Actor;
  idToken?: string;
  expires: number;
  pending?: { state: string; nonce: string; verifier: string; returnTo: string; expires: number };
}

/** Our identity provider's public client for an app on this machine. */
export const DEFAULT_CLIENT_ID = "public-spa";

const MAX_SESSIONS = 10_000;
const PENDING_MS = 10 * 60_000;

/** A path on this host (never another origin: `//x`, `/\x`, `http:`), else "/". */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  return value;
}

export function createBrowserSignIn(options: BrowserSignInOptions) {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const now = options.now ?? Date.now;
  const clientId = options.clientId ?? DEFAULT_CLIENT_ID;
  const scope = options.scope ?? "openid profile email";
  const sessionMs = options.sessionMs ?? 8 * 3600_000;
  const metadata = issuerMetadata(options.issuer, { fetch: doFetch });
  const sessions = new Map<string, SessionData>();

  function data(session: HostSession): SessionData | undefined {
    const d = sessions.get(session.id);
    if (d && d.expires < now()) {
      sessions.delete(session.id);
      return undefined;
    }
    return d;
  }
  function keep(session: HostSession, d: SessionData): void {
    if (!sessions.has(session.id) && sessions.size >= MAX_SESSIONS) {
      for (const [id, old] of sessions) if (old.expires < now()) sessions.delete(id);
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
    }
    sessions.set(session.id, d);
  }

  const redirect = (location: string) => new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
  const page = (status: number, message: string) =>
    new Response(`<!doctype html><title>sign-in</title><p>${message.replace(/[<&>"]/g, "")}</p><p><a href="/auth/login">Sign in again</a></p>`, {
      status,
      headers: { "content-type": "text/html; charset=utf-8" },
    });

  const authenticator: Authenticator = {
    authenticate(req: PipelineRequest) {
      const session = req.script.session;
      return session ? (data(session)?.actor ?? null) : null;
    },
    challenge: () => `Bearer realm="routes"`,
    signInUrl: (req) => `/auth/login?return_to=${encodeURIComponent(req.script.path + new URL(req.request.url).search)}`,
  };

  /** The `/auth/*` routes, as public host routes (the pipeline gives them the host session). */
  function register(host: RouteHost): void {
    host.registerPlanned({ method: "GET", pattern: "/auth/login", public: true }, async (ctx) => {
      const session = ctx.request.session!;
      const m = await metadata();
      if (!m.authorizationEndpoint) return page(500, "the issuer has no authorization endpoint");
      const state = randomHex(16);
      const nonce = randomHex(16);
      const verifier = randomHex(32);
      const returnTo = safeReturnTo(typeof ctx.request.query.return_to === "string" ? ctx.request.query.return_to : undefined);
      keep(session, { ...(data(session) ?? { expires: now() + sessionMs }), pending: { state, nonce, verifier, returnTo, expires: now() + PENDING_MS } });
      const url = new URL(m.authorizationEndpoint);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: `${new URL(ctx.raw.url).origin}/auth/callback`,
        scope,
        state,
        nonce,
        code_challenge: await sha256Base64url(verifier),
        code_challenge_method: "S256",
      }).toString();
      return redirect(url.href);
    });

    host.registerPlanned({ method: "GET", pattern: "/auth/callback", public: true }, async (ctx) => {
      const session = ctx.request.session!;
      const d = data(session);
      const pending = d?.pending;
      const q = ctx.request.query;
      // Single use: whatever happens next, this sign-in attempt is spent.
      if (d) delete d.pending;
      if (!pending || pending.expires < now() || typeof q.state !== "string" || q.state !== pending.state) return page(400, "This sign-in link is not valid (or was used already).");
      if (typeof q.error === "string") return page(401, `The identity provider said: ${q.error}${typeof q.error_description === "string" ? ` (${q.error_description})` : ""}`);
      if (typeof q.code !== "string") return page(400, "The identity provider sent no code.");
      const m = await metadata();
      const body = new URLSearchParams({ grant_type: "authorization_code", code: q.code, redirect_uri: `${new URL(ctx.raw.url).origin}/auth/callback`, code_verifier: pending.verifier, client_id: clientId });
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
      if (options.clientSecret) headers.authorization = basicAuth(clientId, options.clientSecret);
      const res = await doFetch(m.tokenEndpoint!, { method: "POST", headers, body: body.toString() });
      const tokens = (await res.json().catch(() => ({}))) as { id_token?: string; scope?: string; error?: string };
      if (!res.ok || !tokens.id_token) return page(401, `The code could not be exchanged${tokens.error ? `: ${tokens.error}` : ""}.`);
      let claims: Record<string, unknown>;
      try {
        const { jwtVerify } = await loadJose();
        ({ payload: claims } = await jwtVerify(tokens.id_token, m.jwks, { issuer: m.issuer, audience: clientId, currentDate: new Date(now()), clockTolerance: 5 }));
      } catch (err) {
        return page(401, `The ID token is not valid: ${(err as Error).message}`);
      }
      if (claims.nonce !== pending.nonce) return page(401, "The ID token is not for this sign-in (nonce).");
      let actor: Actor;
      try {
        // The ID token's claims, and the scope granted to this sign-in (authorizers read it).
        actor = { ...actorFromClaims({ ...claims, scope: tokens.scope ?? scope }), kind: "user" };
      } catch (err) {
        if (err instanceof AuthenticationError) return page(401, err.message);
        throw err;
      }
      keep(session, { actor, idToken: tokens.id_token, expires: now() + sessionMs });
      return redirect(pending.returnTo);
    });

    const logout = async (ctx: { request: { session: HostSession | null }; raw: Request }) => {
      const session = ctx.request.session!;
      const idToken = data(session)?.idToken;
      sessions.delete(session.id);
      const m = await metadata().catch(() => undefined);
      if (!m?.endSessionEndpoint) return redirect("/");
      const url = new URL(m.endSessionEndpoint);
      url.search = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: new URL(ctx.raw.url).origin, ...(idToken ? { id_token_hint: idToken } : {}) }).toString();
      return redirect(url.href);
    };
    host.registerPlanned({ method: "GET", pattern: "/auth/logout", public: true }, logout);
    host.registerPlanned({ method: "POST", pattern: "/auth/logout", public: true }, logout);
  }

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
