/**
 * Issuers by path, with no configuration: any first path segment that is not one of the
 * provider's own paths names an issuer of its own (`<issuer>/{name}`), with its discovery,
 * endpoints, sessions and tokens; what one issuer issued is unknown at another (also with two
 * instances on one database, in the pair projects). Keys are the provider's, shared.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALICE_SUB,
  authRequest,
  basicAuth,
  client,
  codeFlow,
  failOnServerErrors,
  getAuthorize,
  getJson,
  type Idp,
  interactiveLogin,
  postForm,
  rejection,
  rp,
  startIdp,
  userinfo,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

failOnServerErrors();

describe("issuers by path next to the configured issuer", () => {
  let idp: Idp;
  beforeAll(async () => {
    idp = await startIdp();
  });
  afterAll(() => idp?.svc.stop());

  it("/{name} has its own discovery, with its issuer and endpoints under /{name}; keys are shared", async () => {
    for (const name of ["tenant-a", "tenant-b"]) {
      const res = await getJson<Record<string, string>>(`${idp.base}/${name}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      expect(res.body.issuer).toBe(`${idp.base}/${name}`);
      expect(res.body.token_endpoint).toBe(`${idp.base}/${name}/token`);
      expect(res.body.jwks_uri).toBe(`${idp.base}/${name}/jwks`);
      expect(res.body.end_session_endpoint).toBe(`${idp.base}/${name}/end-session`);
    }
    const root = await getJson(`${idp.base}/jwks`);
    const tenant = await getJson(`${idp.base}/tenant-a/jwks`);
    expect(tenant.body).toEqual(root.body);
    // The configured issuer is unchanged.
    expect((await getJson(`${idp.base}/.well-known/openid-configuration`)).body.issuer).toBe(idp.issuer);
  });

  it("a code flow through openid-client at /tenant-a: tokens of that issuer, unknown at /tenant-b and at the configured issuer", async () => {
    const issuer = `${idp.base}/tenant-a`;
    const config = await rp(issuer);
    const { tokens, claims, callback } = await codeFlow(config, { scope: "openid email offline_access" });
    expect(callback.searchParams.get("iss")).toBe(issuer);
    expect(claims.iss).toBe(issuer);
    expect(claims.sub).toBe(ALICE_SUB);
    expect((await client.fetchUserInfo(config, tokens.access_token, ALICE_SUB)).email).toBe("alice@example.test");

    // The access token is unknown elsewhere.
    for (const other of [`${idp.base}/tenant-b`, idp.base]) {
      const res = await userinfo(`${other}/userinfo`, `Bearer ${tokens.access_token}`);
      expect(res.status, other).toBe(401);
      const intro = await postForm(`${other}/introspect`, { token: tokens.access_token }, { authorization: basicAuth("web-app", WEB_APP_SECRET) });
      expect(intro.body).toEqual({ active: false });
    }
    // So is the refresh token, and at its own issuer it still works.
    const foreign = await postForm(`${idp.base}/tenant-b/token`, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token!,
      client_id: "dev-client",
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe("invalid_grant");
    expect(foreign.headers.get("cache-control")).toContain("no-store");
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()?.iss).toBe(issuer);
  });

  it("a code of one issuer is unknown at another, and stays redeemable at its own", async () => {
    const config = await rp(`${idp.base}/tenant-a`);
    const request = await authRequest(config, { pkce: "none" });
    const { callback } = await interactiveLogin(request.url, "alice");
    const code = callback.searchParams.get("code")!;
    const redirect_uri = "http://127.0.0.1:3000/callback";
    for (const other of [`${idp.base}/tenant-b`, idp.base]) {
      const res = await postForm(`${other}/token`, { grant_type: "authorization_code", code, redirect_uri, client_id: "dev-client" });
      expect(res.status, other).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
    }
    const own = await postForm(`${idp.base}/tenant-a/token`, { grant_type: "authorization_code", code, redirect_uri, client_id: "dev-client" });
    expect(own.status).toBe(200);
    expect(typeof own.body.access_token).toBe("string");
  });

  it("a login at one issuer sets that issuer's cookie, not the configured issuer's idp_session", async () => {
    const a = await rp(`${idp.base}/tenant-a`);
    const { url } = await authRequest(a);
    expect(url.pathname).toBe("/tenant-a/authorize");
    const { cookie } = await interactiveLogin(url, "alice");
    expect(cookie).toBeUndefined();
  });

  it("the tenant session cookie works at its own issuer only", async () => {
    const a = await rp(`${idp.base}/tenant-a`);
    const { url } = await authRequest(a);
    const page = await fetch(url, { redirect: "manual" });
    await page.text();
    const form = new URLSearchParams(url.searchParams);
    form.set("login", "alice");
    const login = await fetch(url.origin + url.pathname, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(login.status).toBe(302);
    const pair = login.headers.getSetCookie().map((l) => l.split(";")[0]!).find((p) => p.startsWith("idp_session.tenant-a="));
    expect(pair).toBeDefined();
    const value = pair!.split("=")[1]!;
    const silentA = await authRequest(a, { params: { prompt: "none" } });
    const resA = await getAuthorize(silentA.url, pair);
    expect(new URL(resA.headers.get("location")!).searchParams.get("code")).toBeTruthy();
    // The same session id under the other issuers' cookie names is unknown there.
    const b = await rp(`${idp.base}/tenant-b`);
    const silentB = await authRequest(b, { params: { prompt: "none" } });
    const resB = await getAuthorize(silentB.url, `idp_session.tenant-b=${value}`);
    expect(new URL(resB.headers.get("location")!).searchParams.get("error")).toBe("login_required");
    const root = await rp(idp.issuer);
    const silentRoot = await authRequest(root, { params: { prompt: "none" } });
    const resRoot = await getAuthorize(silentRoot.url, `idp_session=${value}`);
    expect(new URL(resRoot.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });

  it("client_credentials at an issuer by path: its token is active there only", async () => {
    const auth = { authorization: basicAuth("web-app", WEB_APP_SECRET) };
    const res = await postForm(`${idp.base}/tenant-c/token`, { grant_type: "client_credentials", scope: "api" }, auth);
    expect(res.status).toBe(200);
    const token = res.body.access_token as string;
    expect((await postForm(`${idp.base}/tenant-c/introspect`, { token }, auth)).body).toMatchObject({ active: true, iss: `${idp.base}/tenant-c` });
    expect((await postForm(`${idp.base}/introspect`, { token }, auth)).body).toEqual({ active: false });
  });

  it("the provider's own paths are unchanged: 405 and 404 as before, the debug interface at the root only", async () => {
    const getToken = await fetch(`${idp.base}/token`);
    expect(getToken.status).toBe(405);
    const getTenantToken = await fetch(`${idp.base}/tenant-a/token`);
    expect(getTenantToken.status).toBe(405);
    expect(getTenantToken.headers.get("allow")).toBe("POST, OPTIONS");
    for (
      const path of [
        "/nothing-here",
        "/tenant-a/nothing",
        "/token/extra",
        "/debug/nothing",
        "/-bad/.well-known/openid-configuration",
        "/tenant-a/debug",
        "/tenant-a/debug/reset",
      ]
    ) {
      const res = await fetch(`${idp.base}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toContain("application/json");
      await res.text();
    }
    const debug = await fetch(`${idp.base}/debug`);
    expect(debug.status).toBe(200);
    expect((await debug.json()).counts).toBeDefined();
    const health = await fetch(`${idp.base}/healthz`);
    expect(await health.text()).toBe("ok");
  });

  it("a token of another issuer is refused by openid-client's issuer checks", async () => {
    const a = await rp(`${idp.base}/tenant-a`);
    const b = await rp(`${idp.base}/tenant-b`);
    const request = await authRequest(a);
    const { callback } = await interactiveLogin(request.url, "alice");
    // The callback carries iss=<tenant-a>: tenant-b's configuration refuses it.
    const err = await rejection(
      client.authorizationCodeGrant(b, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce }),
    );
    expect(err.code).toBe("OAUTH_INVALID_RESPONSE");
  });
});

describe("issuers by path beside a path-based issuer (/realms/dev)", () => {
  let idp: Idp;
  beforeAll(async () => {
    idp = await startIdp({}, "/realms/dev");
  });
  afterAll(() => idp?.svc.stop());

  it("<issuer>/{name} is the issuer by path, served under the issuer's path and at the root", async () => {
    for (const base of [`${idp.base}/realms/dev/tenant-a`, `${idp.base}/tenant-a`]) {
      const res = await getJson<Record<string, string>>(`${base}/.well-known/openid-configuration`);
      expect(res.status, base).toBe(200);
      expect(res.body.issuer).toBe(`${idp.base}/realms/dev/tenant-a`);
      expect(res.body.token_endpoint).toBe(`${idp.base}/realms/dev/tenant-a/token`);
    }
    // The configured issuer's own first segment names no issuer.
    expect((await fetch(`${idp.base}/realms/.well-known/openid-configuration`)).status).toBe(404);
    const config = await rp(`${idp.base}/realms/dev/tenant-a`);
    const { claims } = await codeFlow(config);
    expect(claims.iss).toBe(`${idp.base}/realms/dev/tenant-a`);
  });
});
