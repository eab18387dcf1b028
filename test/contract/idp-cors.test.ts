/**
 * Identity provider: CORS for browser clients (a single-page app on another origin). Discovery,
 * JWKS, token, userinfo, revocation and device authorization answer cross-origin requests and
 * their preflights for allowed origins: the origins of registered redirect URIs (a loopback IP
 * literal's on any port) plus IDP_CORS_ORIGINS; never the pages (authorize, end-session, device,
 * debug). A POST from an origin that is not allowed spends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authRequest, client, failOnServerErrors, type Idp, interactiveLogin, rp, startIdp } from "./idp-helpers.ts";

/** The SPA of the issue: its redirect URI is configured, so its origin is allowed. */
const SPA = "http://localhost:4000";
const SPA_CALLBACK = `${SPA}/callback`;
/** Allowed by IDP_CORS_ORIGINS alone (no redirect URI there). */
const EXTRA = "http://app.example.test";

const ENDPOINTS: [path: string, method: string][] = [
  ["/.well-known/openid-configuration", "GET"],
  ["/jwks", "GET"],
  ["/token", "POST"],
  ["/userinfo", "GET"],
  ["/revoke", "POST"],
  ["/device_authorization", "POST"],
];

const FORM = { "content-type": "application/x-www-form-urlencoded" };

function preflight(base: string, path: string, method: string, origin: string, headers = "authorization, content-type, dpop"): Promise<Response> {
  return fetch(base + path, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers },
  });
}

/** `Vary` as a lower-case list. */
const vary = (res: Response) => (res.headers.get("vary") ?? "").split(",").map((v) => v.trim().toLowerCase());
const list = (value: string | null) => (value ?? "").split(",").map((v) => v.trim().toLowerCase());

failOnServerErrors();

describe("CORS with the redirect URIs' origins and IDP_CORS_ORIGINS", () => {
  let idp: Idp;
  let config: client.Configuration;
  beforeAll(async () => {
    idp = await startIdp({ IDP_REDIRECT_URIS: SPA_CALLBACK, IDP_CORS_ORIGINS: `${EXTRA}/` });
    config = await rp(idp.issuer, "dev-client");
  });
  afterAll(() => idp?.svc.stop());

  /** A code for dev-client at the SPA's callback, with its PKCE verifier. */
  async function code(): Promise<{ code: string; verifier: string }> {
    const request = await authRequest(config, { redirectUri: SPA_CALLBACK, scope: "openid email offline_access" });
    const { callback } = await interactiveLogin(request.url, "alice");
    return { code: callback.searchParams.get("code")!, verifier: request.verifier! };
  }

  function exchange(grant: { code: string; verifier: string }, headers: Record<string, string> = {}): Promise<Response> {
    const body = new URLSearchParams({
      grant_type: "authorization_code",
      client_id: "dev-client",
      redirect_uri: SPA_CALLBACK,
      code: grant.code,
      code_verifier: grant.verifier,
    });
    return fetch(`${idp.base}/token`, { method: "POST", headers: { ...FORM, ...headers }, body });
  }

  it.each(ENDPOINTS)("OPTIONS %s from an allowed origin: 204 with the origin, the method, the request headers and Vary: Origin", async (path, method) => {
    const res = await preflight(idp.base, path, method, SPA);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(SPA);
    expect(list(res.headers.get("access-control-allow-methods"))).toContain(method.toLowerCase());
    expect(list(res.headers.get("access-control-allow-headers"))).toEqual(expect.arrayContaining(["authorization", "content-type", "dpop"]));
    expect(list(res.headers.get("access-control-expose-headers"))).toEqual(expect.arrayContaining(["www-authenticate", "dpop-nonce"]));
    expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    expect(vary(res)).toContain("origin");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(await res.text()).toBe("");
  });

  it("OPTIONS from an origin that is not allowed: no Access-Control-Allow-Origin, so the browser refuses", async () => {
    for (const origin of ["http://evil.test", "http://localhost:4001", "https://localhost:4000", "null"]) {
      const res = await preflight(idp.base, "/userinfo", "GET", origin);
      expect(res.headers.get("access-control-allow-origin"), origin).toBeNull();
      await res.arrayBuffer();
    }
  });

  it("IDP_CORS_ORIGINS adds an origin (a trailing / is dropped); a loopback IP literal's redirect URI allows that host on any port", async () => {
    // http://127.0.0.1:8080/callback is a builtin redirect URI (public-spa, web-app).
    for (const origin of [EXTRA, "http://127.0.0.1:8080", "http://127.0.0.1:4321"]) {
      const res = await preflight(idp.base, "/token", "POST", origin, "content-type");
      expect(res.headers.get("access-control-allow-origin"), origin).toBe(origin);
      await res.arrayBuffer();
    }
    // localhost is a name, not a loopback literal: exact; [::1] and https are not registered.
    for (const origin of ["http://localhost:4321", "http://[::1]:4321", "https://127.0.0.1:4321", "https://app.example.test"]) {
      const res = await preflight(idp.base, "/token", "POST", origin, "content-type");
      expect(res.headers.get("access-control-allow-origin"), origin).toBeNull();
      await res.arrayBuffer();
    }
  });

  it("discovery and JWKS: the allowed origin, exposed headers and Vary: Origin; without an allowed Origin, Vary alone", async () => {
    for (const path of ["/.well-known/openid-configuration", "/jwks"]) {
      const allowed = await fetch(idp.base + path, { headers: { origin: SPA } });
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get("access-control-allow-origin")).toBe(SPA);
      expect(list(allowed.headers.get("access-control-expose-headers"))).toContain("www-authenticate");
      expect(vary(allowed)).toContain("origin");
      await allowed.json();
      for (const headers of [{ origin: "http://evil.test" }, {}] as Record<string, string>[]) {
        const other = await fetch(idp.base + path, { headers });
        expect(other.status).toBe(200);
        expect(other.headers.get("access-control-allow-origin")).toBeNull();
        expect(vary(other)).toContain("origin");
        await other.json();
      }
    }
  });

  it("discovery lists the response modes", async () => {
    const doc = (await (await fetch(`${idp.base}/.well-known/openid-configuration`)).json()) as { response_modes_supported: string[] };
    expect(doc.response_modes_supported).toEqual(["query", "fragment", "form_post"]);
  });

  it("token, userinfo and revocation answer the allowed origin; a 401 from userinfo exposes WWW-Authenticate", async () => {
    const res = await exchange(await code(), { origin: SPA });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(SPA);
    expect(vary(res)).toContain("origin");
    const tokens = (await res.json()) as { access_token: string; refresh_token: string };

    const info = await fetch(`${idp.base}/userinfo`, { headers: { origin: SPA, authorization: `Bearer ${tokens.access_token}` } });
    expect(info.status).toBe(200);
    expect(info.headers.get("access-control-allow-origin")).toBe(SPA);
    expect(((await info.json()) as { email: string }).email).toBe("alice@example.test");

    const refused = await fetch(`${idp.base}/userinfo`, { headers: { origin: SPA, authorization: "Bearer not-a-token" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(SPA);
    expect(list(refused.headers.get("access-control-expose-headers"))).toContain("www-authenticate");
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await refused.json();

    const revoked = await fetch(`${idp.base}/revoke`, {
      method: "POST",
      headers: { ...FORM, origin: SPA },
      body: new URLSearchParams({ client_id: "dev-client", token: tokens.refresh_token }),
    });
    expect(revoked.status).toBe(200);
    expect(revoked.headers.get("access-control-allow-origin")).toBe(SPA);
    await revoked.arrayBuffer();
    const after = await fetch(`${idp.base}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(after.status).toBe(401);
    await after.arrayBuffer();
  });

  it("an OAuth error from /token carries the CORS headers too, so the page can read it", async () => {
    const res = await exchange({ code: "no-such-code", verifier: "v".repeat(43) }, { origin: EXTRA });
    expect(res.status).toBe(400);
    expect(res.headers.get("access-control-allow-origin")).toBe(EXTRA);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("device authorization answers the allowed origin", async () => {
    const res = await fetch(`${idp.base}/device_authorization`, {
      method: "POST",
      headers: { ...FORM, origin: SPA },
      body: new URLSearchParams({ client_id: "dev-client", scope: "openid" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(SPA);
    expect(((await res.json()) as { user_code: string }).user_code).toBeTruthy();
  });

  it("a POST /token from an origin that is not allowed is refused (403) and does not spend the code", async () => {
    const grant = await code();
    const refused = await exchange(grant, { origin: "http://evil.test" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    const body = (await refused.json()) as { error: string; error_description: string };
    expect(body.error).toBe("invalid_request");
    expect(body.error_description).toContain("http://evil.test");
    // The code is still good for the app that is allowed (or a server, which sends no Origin).
    const res = await exchange(grant, { origin: SPA });
    expect(res.status).toBe(200);
    await res.json();
  });

  it("revocation and device authorization refuse an origin that is not allowed the same way", async () => {
    for (
      const [path, params] of [
        ["/revoke", { client_id: "dev-client", token: "anything" }],
        ["/device_authorization", { client_id: "dev-client", scope: "openid" }],
      ] as const
    ) {
      const res = await fetch(idp.base + path, { method: "POST", headers: { ...FORM, origin: "http://evil.test" }, body: new URLSearchParams(params) });
      expect(res.status, path).toBe(403);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
    }
  });

  it("a POST from the provider's own origin is same-origin, not cross-origin", async () => {
    const res = await exchange({ code: "no-such-code", verifier: "v".repeat(43) }, { origin: new URL(idp.base).origin });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("never on the pages: authorize, end-session, device and debug have no CORS headers, and their OPTIONS is 405", async () => {
    const authorize = (await authRequest(config, { redirectUri: SPA_CALLBACK })).url;
    const pages = [authorize.href, `${idp.base}/end-session`, `${idp.base}/device`, `${idp.base}/debug`];
    for (const url of pages) {
      const res = await fetch(url, { headers: { origin: SPA }, redirect: "manual" });
      expect(res.headers.get("access-control-allow-origin"), url).toBeNull();
      await res.arrayBuffer();
    }
    for (const path of ["/authorize", "/end-session", "/device", "/introspect"]) {
      const res = await preflight(idp.base, path, "POST", SPA);
      expect(res.status, path).toBe(405);
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
      expect(res.headers.get("allow"), path).not.toMatch(/OPTIONS/);
      await res.arrayBuffer();
    }
  });

  it("a 405 at an endpoint that answers preflights lists OPTIONS in Allow (RFC 9110 §15.5.6)", async () => {
    for (const [path, method] of ENDPOINTS) {
      const res = await fetch(idp.base + path, { method: "DELETE" });
      expect(res.status, path).toBe(405);
      const allow = res.headers.get("allow")!.split(", ");
      expect(allow, path).toContain(method);
      expect(allow, path).toContain("OPTIONS");
      await res.arrayBuffer();
    }
  });
});

describe("IDP_CORS_ORIGINS=* (local work)", () => {
  let idp: Idp;
  beforeAll(async () => {
    idp = await startIdp({ IDP_CORS_ORIGINS: "*" });
  });
  afterAll(() => idp?.svc.stop());

  it("every origin may call the endpoints (its own origin is answered), still never the pages", async () => {
    for (const origin of ["http://anything.test:1234", "https://example.com", "null"]) {
      const res = await preflight(idp.base, "/token", "POST", origin, "content-type");
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin"), origin).toBe(origin);
      const jwks = await fetch(`${idp.base}/jwks`, { headers: { origin } });
      expect(jwks.headers.get("access-control-allow-origin"), origin).toBe(origin);
      await jwks.json();
    }
    const page = await fetch(`${idp.base}/device`, { headers: { origin: "https://example.com" } });
    expect(page.headers.get("access-control-allow-origin")).toBeNull();
    await page.text();
  });
});
