// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * `GET /debug/client` (loopback only, like the rest of /debug): a small client built into the
 * provider, so a sign-in started from the command line's banner ends on a page that shows what
 * happened (as navikt's mock-oauth2-server debugger does). The first visit starts an
 * authorization code flow with PKCE for the client `debug-client`, whose only redirect URI is this
 * page; the provider's login page comes back here with the code, which is exchanged at the token
 * endpoint (in-process), and the page shows the token response and the ID and access tokens
 * decoded (header and claims; the ID token's signature checked against the provider's JWKS).
 */
import { Hono, type Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { html } from "hono/html";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import type { Client } from "../domain/clients.ts";
import { OAuthError } from "../domain/errors.ts";
import type { Provider } from "../domain/provider.ts";
import { page } from "../pages/layout.ts";
import { oauthErrorResponse, PAGE_HEADERS, secureCookies } from "./http.ts";

const DEBUG_CLIENT_ID = "debug-client";
const COOKIE = "idp_debug_client";

const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const random = () => b64url(crypto.getRandomValues(new Uint8Array(24)));

/** The builtin client whose redirect URI is this page (at each issuer the provider answers as). */
function debugClient(p: Provider, callback: string): void {
  let client = p.clients.get(DEBUG_CLIENT_ID);
  if (!client) {
    client = { client_id: DEBUG_CLIENT_ID, redirect_uris: new Set(), post_logout_redirect_uris: new Set(), require_pkce: true } as Client;
    p.clients.set(DEBUG_CLIENT_ID, client);
  }
  // A GET adds one, and with an issuer that follows the request's origin any `*.localhost` name
  // makes a new one: the most recent few are kept, so another site's page cannot grow the set.
  client.redirect_uris.delete(callback);
  client.redirect_uris.add(callback);
  for (const oldest of client.redirect_uris) {
    if (client.redirect_uris.size <= MAX_CALLBACKS) break;
    client.redirect_uris.delete(oldest);
  }
}

const MAX_CALLBACKS = 16;

function decoded(token: unknown): { header: unknown; claims: unknown } | undefined {
  if (typeof token !== "string" || token.split(".").length !== 3) return undefined;
  try {
    return { header: decodeProtectedHeader(token), claims: decodeJwt(token) };
  } catch {
    return undefined;
  }
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

export function registerDebugClient(app: Hono, p: Provider): void {
  // The token and JWKS endpoints called in-process, with the provider's answers for its errors
  // (the routes' own app leaves errors to the app that mounts it). Built on first use, when every
  // route is registered.
  let endpoints: Hono | undefined;
  const call = (c: Context, path: string, init?: RequestInit) => {
    if (!endpoints) {
      endpoints = new Hono();
      endpoints.onError((err, ec) => (err instanceof OAuthError ? oauthErrorResponse(ec, err) : ec.json({ error: "server_error", error_description: err.message }, 500)));
      endpoints.route("/", app);
    }
    return endpoints.fetch(new Request(new URL(path, c.req.url), init), c.env);
  };

  // Known before any visit where the issuer does not follow the request's origin, so every
  // instance sharing this configuration accepts the redirect.
  // An issuer that follows the origin: its loopback form, which stands for every port (RFC 8252
  // §7.3), so every instance accepts the page's redirect before anyone visited it there.
  const fixed = p.issuerFor("http://127.0.0.1/");
  debugClient(p, `${fixed}/debug/client`);

  app.get("/debug/client", async (c: Context) => {
    const issuer = p.issuerFor(c.req.url);
    const callback = `${issuer}/debug/client`;
    debugClient(p, callback);
    const q = c.req.query();
    for (const [k, v] of Object.entries(PAGE_HEADERS)) c.header(k, v);

    if (!q.code && !q.error) {
      // Start: state, nonce and the PKCE verifier in a cookie for this page only.
      const state = random();
      const nonce = random();
      const verifier = random() + random();
      const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
      setCookie(c, COOKIE, `${state}.${nonce}.${verifier}`, { path: new URL(callback).pathname, httpOnly: true, sameSite: "Lax", maxAge: 600, secure: secureCookies(c, p) });
      const scope = q.scope || "openid profile email";
      const authorize = `${issuer}/authorize?${new URLSearchParams({ client_id: DEBUG_CLIENT_ID, redirect_uri: callback, response_type: "code", scope, state, nonce, code_challenge: challenge, code_challenge_method: "S256" })}`;
      return c.redirect(authorize, 302);
    }

    const [state, nonce, verifier] = (getCookie(c, COOKIE) ?? "").split(".");
    deleteCookie(c, COOKIE, { path: new URL(callback).pathname });
    const again = html`<p><a href="${new URL(callback).pathname}" id="again">Sign in again</a> · <a href="${new URL(issuer).pathname.replace(/\/$/, "")}/debug/ui">debug page</a></p>`;
    if (q.error) {
      return c.html(page("Sign-in ended with an error", html`<p class="error" id="result">${q.error}${q.error_description ? `: ${q.error_description}` : ""}</p>${again}`), 200);
    }
    if (!state || q.state !== state) {
      return c.html(page("Not this sign-in", html`<p class="error" id="result">The state does not match the sign-in this browser started (or its cookie expired).</p>${again}`), 400);
    }

    // The exchange, in-process: the same token endpoint any client reaches.
    const tokenRes = await call(c, "/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: q.code!, redirect_uri: callback, client_id: DEBUG_CLIENT_ID, code_verifier: verifier! }),
    });
    const tokens = (await tokenRes.json().catch(() => ({}))) as Record<string, unknown>;
    if (!tokenRes.ok) {
      return c.html(page("The code exchange failed", html`<p class="error" id="result">HTTP ${tokenRes.status}</p><pre>${json(tokens)}</pre>${again}`), 400);
    }

    let verified = "not checked";
    const id = decoded(tokens.id_token);
    if (typeof tokens.id_token === "string") {
      try {
        const jwks = (await (await call(c, "/jwks")).json()) as JSONWebKeySet;
        const { payload } = await jwtVerify(tokens.id_token, createLocalJWKSet(jwks), { issuer, audience: DEBUG_CLIENT_ID });
        verified = payload.nonce === nonce ? `signature valid (key ${String((id?.header as { kid?: string } | undefined)?.kid ?? "without kid")}), iss, aud and nonce as expected` : "signature valid, but the nonce is not this sign-in's";
      } catch (err) {
        verified = `not valid: ${(err as Error).message}`;
      }
    }
    const access = decoded(tokens.access_token);
    const shown = Object.fromEntries(Object.entries(tokens).map(([k, v]) => [k, typeof v === "string" && v.length > 48 ? `${v.slice(0, 24)}…${v.slice(-8)}` : v]));
    const claims = (id?.claims ?? {}) as Record<string, unknown>;
    const who = claims.preferred_username ?? claims.name ?? claims.sub;
    return c.html(
      page(
        "Signed in",
        html`<p id="result">The code flow went through: <strong>${String(who ?? "?")}</strong>${claims.sub && claims.sub !== who ? ` (${String(claims.sub)})` : ""} signed in at ${issuer} (client ${DEBUG_CLIENT_ID}, PKCE S256).</p>
          <h2>ID token</h2>
          ${id ? html`<p id="verified">${verified}</p><pre id="id-token-header">${json(id.header)}</pre><pre id="id-token-claims">${json(id.claims)}</pre>` : html`<p>none (no <code>openid</code> scope)</p>`}
          <h2>Access token</h2>
          ${access ? html`<pre id="access-token-header">${json(access.header)}</pre><pre id="access-token-claims">${json(access.claims)}</pre>` : html`<p>opaque: <code>${shown.access_token}</code> (its claims at /introspect)</p>`}
          <h2>Token response</h2>
          <pre id="token-response">${json(shown)}</pre>
          ${again}`,
      ),
    );
  });
}
