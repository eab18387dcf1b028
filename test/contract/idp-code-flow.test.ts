// deno-lint-ignore-file no-explicit-any -- JSON read back from a service, typed where it is checked
/**
 * Identity provider: discovery, keys, the authorization code flow with PKCE driven by openid-client,
 * seeded users and silent authentication (prompt, max_age, login_hint). Client rules and a
 * single-page app on another origin are in idp-code-flow-clients.test.ts.
 */
import { describe, expect, it } from "vitest";
import { decodeJwt, decodeProtectedHeader } from "jose";
import {
  advanceClock,
  ALICE_SUB,
  authRequest,
  client,
  codeFlow,
  debugJson,
  getAuthorize,
  getJson,
  inputByName,
  interactiveLogin,
  postLogin,
  redeem,
  REDIRECT_URI,
  rejection,
  sessionCookie,
  sessionSetCookie,
  useProvider,
} from "./idp-helpers.ts";

// Seeded users with every field the spec names (inline YAML, as IDP_USERS carries it).
const USERS_YAML = `users:
  - login: carol
    sub: seeded-carol-0001
    email: carol@corp.test
    name: Carol Seeded
    password: s3cret-pw
    email_verified: true
    groups: [engineering, "   ", ops]
    roles: [editor, " "]
    tenant: acme
    preferred_username: carol.s
    locale: de-DE
    claims:
      tenant: acme-override
      department: R&D
    omit_claims: [locale]
    category: QA people
  - login: dave
    email: dave@corp.test
    email-verified: false
    category: QA people
`;

const idp = useProvider({ IDP_USERS: USERS_YAML });

describe("discovery and keys", () => {
  it("advertises the issuer, endpoints, grants, PKCE methods and DPoP algorithms", async () => {
    const res = await getJson<Record<string, any>>(`${idp.base}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const d = res.body;
    expect(d.issuer).toBe(idp.issuer);
    for (
      const [field, path] of [
        ["authorization_endpoint", "/authorize"],
        ["token_endpoint", "/token"],
        ["userinfo_endpoint", "/userinfo"],
        ["jwks_uri", "/jwks"],
        ["end_session_endpoint", "/end-session"],
        ["device_authorization_endpoint", "/device_authorization"],
        ["introspection_endpoint", "/introspect"],
        ["revocation_endpoint", "/revoke"],
      ] as const
    ) {
      expect(d[field], field).toBe(idp.issuer + path);
    }
    expect(d.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(["ES256", "RS256"]));
    expect(d.grant_types_supported).toEqual(
      expect.arrayContaining([
        "authorization_code",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:device_code",
        "client_credentials",
      ]),
    );
    expect(d.code_challenge_methods_supported).toEqual(expect.arrayContaining(["S256", "plain"]));
    expect(d.authorization_response_iss_parameter_supported).toBe(true);
    expect(d.response_types_supported).toContain("code");
    expect(d.id_token_signing_alg_values_supported).toContain("RS256");
    expect(d.scopes_supported).toEqual(expect.arrayContaining(["openid", "offline_access"]));
    expect(d.claims_supported).toEqual(expect.arrayContaining(["sub", "email", "email_verified", "name"]));
  });

  it("openid-client accepts the discovery document", () => {
    const m = idp.config.serverMetadata();
    expect(m.issuer).toBe(idp.issuer);
    expect(m.token_endpoint).toBe(`${idp.issuer}/token`);
  });

  it("/jwks publishes dev-key-1, rotated-key-2, bad-sig-key and an active and a rotated key of PS256, ES256 and EdDSA, without private members", async () => {
    const res = await getJson<{ keys: Record<string, unknown>[] }>(`${idp.base}/jwks`);
    expect(res.status).toBe(200);
    const kids = res.body.keys.map((k) => k.kid).sort();
    expect(kids).toEqual([
      "bad-sig-key",
      "dev-key-1",
      "dev-key-1-eddsa",
      "dev-key-1-es256",
      "dev-key-1-ps256",
      "rotated-key-2",
      "rotated-key-2-eddsa",
      "rotated-key-2-es256",
      "rotated-key-2-ps256",
    ]);
    const KTY: Record<string, string> = { RS256: "RSA", PS256: "RSA", ES256: "EC", EdDSA: "OKP" };
    for (const key of res.body.keys) {
      for (const secret of ["d", "p", "q", "dp", "dq", "qi", "k", "oth"]) expect(key, `${key.kid}.${secret}`).not.toHaveProperty(secret);
      expect(key.kty, String(key.kid)).toBe(KTY[key.alg as string]);
      expect(key.use).toBe("sig");
    }
  });
});

describe("authorization code flow", () => {
  it("S256 PKCE with state and nonce: alice gets a verified ID token with the synthetic claims", async () => {
    const before = Math.floor(Date.now() / 1000);
    const { tokens, callback, request } = await codeFlow(idp.config, { pkce: "S256" });
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("state")).toBe(request.state);
    expect(callback.searchParams.get("iss")).toBe(idp.issuer);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeUndefined();
    const claims = decodeJwt(tokens.id_token!);
    const header = decodeProtectedHeader(tokens.id_token!);
    expect(header.alg).toBe("RS256");
    expect(header.kid).toBe("dev-key-1");
    expect(claims.iss).toBe(idp.issuer);
    expect(claims.sub).toBe(ALICE_SUB);
    expect(claims.aud === "dev-client" || (Array.isArray(claims.aud) && claims.aud.includes("dev-client"))).toBe(true);
    expect(claims.nonce).toBe(request.nonce);
    expect(claims.email).toBe("alice@example.test");
    expect(typeof claims.email_verified).toBe("boolean");
    expect(claims.name).toBe("alice");
    // at_hash: the left half of SHA-256 of the access token, base64url (OIDC Core 3.1.3.6).
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(tokens.access_token)));
    expect(claims.at_hash).toBe(Buffer.from(digest.subarray(0, 16)).toString("base64url"));
    expect(claims.iat).toBeGreaterThanOrEqual(before - 5);
    expect(claims.exp).toBe(claims.iat! + 3600);
    expect(claims.auth_time).toBeGreaterThanOrEqual(before - 5);
    expect(claims.auth_time).toBeLessThanOrEqual(claims.iat!);
  });

  it("the token response is not cacheable", async () => {
    const request = await authRequest(idp.config);
    const { callback } = await interactiveLogin(request.url, "alice");
    const res = await fetch(`${idp.base}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: callback.searchParams.get("code")!,
        redirect_uri: REDIRECT_URI,
        client_id: "dev-client",
        code_verifier: request.verifier!,
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/no-store/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.token_type).toBe("Bearer");
    expect(body.scope).toEqual(expect.stringContaining("openid"));
  });

  it("plain PKCE works too", async () => {
    const { claims } = await codeFlow(idp.config, { pkce: "plain" });
    expect(claims.sub).toBe(ALICE_SUB);
  });

  it("the login is trimmed and lower-cased: '  Alice ' is alice", async () => {
    const { claims } = await codeFlow(idp.config, { login: "  Alice " });
    expect(claims.sub).toBe(ALICE_SUB);
    expect(claims.email).toBe("alice@example.test");
    expect(claims.name).toBe("alice");
  });

  it("a login with @ is its own email and its local part is the name", async () => {
    const { claims } = await codeFlow(idp.config, { login: "Zoe.Q@Example.Org" });
    expect(claims.email).toBe("zoe.q@example.org");
    expect(claims.name).toBe("zoe.q");
    expect(claims.sub).toMatch(/^user-[A-Za-z0-9_-]{22}$/);
    expect(claims.sub).not.toBe(ALICE_SUB);
  });

  it("userinfo returns sub, email, email_verified and name for the access token", async () => {
    const { tokens, claims } = await codeFlow(idp.config);
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, claims.sub);
    expect(info.sub).toBe(ALICE_SUB);
    expect(info.email).toBe("alice@example.test");
    expect(info.email_verified).toBe(claims.email_verified);
    expect(info.name).toBe("alice");
  });

  it("sets an HttpOnly, SameSite=Lax, non-Secure idp_session cookie on Path=/", async () => {
    const request = await authRequest(idp.config);
    await getAuthorize(request.url);
    const res = await postLogin(request.url, "alice");
    expect(res.status).toBe(302);
    const line = sessionSetCookie(res)!;
    expect(line).toBeDefined();
    expect(line).toMatch(/;\s*HttpOnly/i);
    expect(line).toMatch(/;\s*SameSite=Lax/i);
    expect(line).not.toMatch(/;\s*Secure/i);
    expect(line).toMatch(/;\s*Path=\//i);
  });
});

describe("seeded users (IDP_USERS)", () => {
  it("a seeded user's helper fields, extra claims and omissions show in the ID token and userinfo", async () => {
    const { tokens, claims } = await codeFlow(idp.config, { login: "carol", password: "s3cret-pw" });
    const expected = {
      sub: "seeded-carol-0001",
      email: "carol@corp.test",
      email_verified: true,
      name: "Carol Seeded",
      groups: ["engineering", "ops"],
      roles: ["editor"],
      tenant: "acme-override",
      department: "R&D",
      preferred_username: "carol.s",
    };
    expect(claims).toMatchObject(expected);
    expect(claims).not.toHaveProperty("locale");
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, "seeded-carol-0001");
    expect(info).toMatchObject(expected);
    expect(info).not.toHaveProperty("locale");
  });

  it("accepts the email-verified spelling", async () => {
    const { claims } = await codeFlow(idp.config, { login: "dave" });
    expect(claims.email).toBe("dave@corp.test");
    expect(claims.email_verified).toBe(false);
  });

  it("seeded users appear on the login page under their category", async () => {
    const request = await authRequest(idp.config);
    const html = await (await getAuthorize(request.url)).text();
    const section = /<section\b[^>]*data-category="QA people"[^>]*>([\s\S]*?)<\/section>/i.exec(html);
    expect(section).not.toBeNull();
    expect(section![1]).toMatch(/data-login="carol"/);
    expect(section![1]).toMatch(/data-login="dave"/);
  });

  it("a wrong or missing seeded password is 401 'invalid login or password' and creates nothing", async () => {
    const sessionsBefore = await debugJson<unknown[]>(idp.base, "/sessions");
    const codesBefore = await debugJson<unknown[]>(idp.base, "/codes");
    const request = await authRequest(idp.config);
    for (const password of ["wrong", ""]) {
      const res = await postLogin(request.url, "carol", password);
      expect(res.status).toBe(401);
      expect(res.headers.get("location")).toBeNull();
      expect(sessionCookie(res)).toBeUndefined();
      expect(await res.text()).toContain("invalid login or password");
    }
    expect(await debugJson(idp.base, "/sessions")).toEqual(sessionsBefore);
    expect(await debugJson(idp.base, "/codes")).toEqual(codesBefore);
  });
});

describe("silent authentication", () => {
  it("prompt=none with a session issues a code without UI", async () => {
    const first = await codeFlow(idp.config);
    expect(first.cookie).toBeDefined();
    const request = await authRequest(idp.config, { params: { prompt: "none" } });
    const res = await getAuthorize(request.url, first.cookie);
    expect(res.status).toBe(302);
    const callback = new URL(res.headers.get("location")!);
    expect(callback.searchParams.get("code")).toBeTruthy();
    const tokens = await redeem(idp.config, callback, request);
    expect(tokens.claims()!.sub).toBe(ALICE_SUB);
    expect(tokens.claims()!.auth_time).toBe(first.claims.auth_time);
  });

  it("prompt=none without a session redirects login_required with state and iss", async () => {
    const request = await authRequest(idp.config, { params: { prompt: "none" } });
    const res = await getAuthorize(request.url);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get("error")).toBe("login_required");
    expect(location.searchParams.get("state")).toBe(request.state);
    expect(location.searchParams.get("iss")).toBe(idp.issuer);
    const err = await rejection(redeem(idp.config, location, request));
    expect(err.error).toBe("login_required");
  });

  it("prompt=none with an unknown cookie value is login_required", async () => {
    const request = await authRequest(idp.config, { params: { prompt: "none" } });
    const res = await getAuthorize(request.url, "idp_session=not-a-session");
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });

  it("prompt=login shows the login form despite a session", async () => {
    const { cookie } = await codeFlow(idp.config);
    const request = await authRequest(idp.config, { params: { prompt: "login" } });
    const res = await getAuthorize(request.url, cookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/id="login-form"/);
  });

  it("without prompt, a session is used silently", async () => {
    const { cookie } = await codeFlow(idp.config);
    const request = await authRequest(idp.config);
    const res = await getAuthorize(request.url, cookie);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });

  it("max_age=0 forces a fresh login", async () => {
    const { cookie } = await codeFlow(idp.config);
    const request = await authRequest(idp.config, { params: { max_age: "0" } });
    const res = await getAuthorize(request.url, cookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/id="login-form"/);
  });

  it("max_age with a fresh session is silent and auth_time stays the original login time", async () => {
    const first = await codeFlow(idp.config);
    await advanceClock(idp.base, 120);
    const request = await authRequest(idp.config, { params: { max_age: "3600" } });
    const res = await getAuthorize(request.url, first.cookie);
    expect(res.status).toBe(302);
    const callback = new URL(res.headers.get("location")!);
    const tokens = await client.authorizationCodeGrant(idp.config, callback, {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
      maxAge: 3600,
    });
    const claims = tokens.claims()!;
    expect(claims.auth_time).toBe(first.claims.auth_time);
    expect(claims.iat).toBeGreaterThanOrEqual(first.claims.auth_time! + 120);
  });

  it("max_age shorter than the session's age forces re-authentication", async () => {
    const first = await codeFlow(idp.config);
    await advanceClock(idp.base, 120);
    const request = await authRequest(idp.config, { params: { max_age: "60" } });
    const res = await getAuthorize(request.url, first.cookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/id="login-form"/);
  });

  it("login_hint prefills the login field", async () => {
    const request = await authRequest(idp.config, { params: { login_hint: "hinted.user@example.test" } });
    const res = await getAuthorize(request.url);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/id="login-form"/);
    expect(inputByName(html, "login")?.value).toBe("hinted.user@example.test");
    expect(html).toMatch(/id="sign-in"/);
    expect(inputByName(html, "password")).toBeDefined();
  });

  it("login_hint and other parameters are HTML-escaped on the login page", async () => {
    const hint = `"><script>alert("hint")</script>`;
    const request = await authRequest(idp.config, { params: { login_hint: hint } });
    const html = await (await getAuthorize(request.url)).text();
    expect(html).not.toContain(`<script>alert("hint")`);
    expect(inputByName(html, "login")?.value).toBe(hint);
  });
});
