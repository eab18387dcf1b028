/**
 * Identity provider: the builtin scenarios (docs/idp.md#users-and-scenarios), each asserted by its effect on a real
 * relying party (openid-client with ID token signature checks against /jwks), plus the login
 * page's quick picks and scenarios added at run time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import {
  attributes,
  authRequest,
  client,
  codeFlow,
  getAuthorize,
  getJson,
  type Idp,
  interactiveLogin,
  loginCategories,
  postLogin,
  quickPickLogins,
  redeem,
  rejection,
  rp,
  startIdp,
  userinfo,
} from "./idp-helpers.ts";

const TOKEN_SLOW_MS = 300;

/** The builtin scenarios (docs/idp.md#users-and-scenarios), by login-page category, in page order. */
const BUILTIN_BY_CATEGORY: Record<string, string[]> = {
  "Normal users": ["alice", "bob"],
  "Claim variants": ["admin", "viewer", "no-groups", "many-groups", "tenant-a-admin", "tenant-b-viewer", "unicode-name", "no-email", "unverified-email"],
  "Authorization failures": ["fail-access-denied", "fail-login-required", "fail-consent-required", "fail-server-error"],
  "Token failures": ["token-invalid-grant", "token-server-error", "token-slow"],
  "ID token failures": ["id-expired", "id-wrong-aud", "id-wrong-iss", "id-missing-email", "id-email-unverified", "id-bad-nonce", "id-future-iat"],
  "Userinfo failures": ["userinfo-401", "userinfo-500", "userinfo-sub-mismatch"],
  "Key cases": ["key-rotated", "kid-not-found", "bad-signature"],
};

let idp: Idp;
let config: client.Configuration;

beforeAll(async () => {
  idp = await startIdp({ IDP_TOKEN_SLOW_MS: String(TOKEN_SLOW_MS) });
  config = await rp(idp.issuer);
});
afterAll(() => idp?.svc.stop());

/** Logs in as `login` and returns the code callback without redeeming it. */
async function loginAs(login: string) {
  const request = await authRequest(config);
  const { callback } = await interactiveLogin(request.url, login);
  return { request, callback };
}

const roleLike = (claims: Record<string, unknown>): string[] => [claims.roles, claims.groups].flatMap((v) => (Array.isArray(v) ? v.map(String) : []));

describe("authorization failures redirect to the client with that error", () => {
  for (
    const [login, error] of [
      ["fail-access-denied", "access_denied"],
      ["fail-login-required", "login_required"],
      ["fail-consent-required", "consent_required"],
      ["fail-server-error", "server_error"],
    ] as const
  ) {
    it(`${login} -> error=${error}`, async () => {
      const request = await authRequest(config);
      await (await getAuthorize(request.url)).arrayBuffer();
      const res = await postLogin(request.url, login);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get("location")!);
      expect(location.searchParams.get("error")).toBe(error);
      expect(location.searchParams.get("state")).toBe(request.state);
      expect(location.searchParams.get("iss")).toBe(idp.issuer);
      expect(location.searchParams.get("code")).toBeNull();
      const err = await rejection(redeem(config, location, request));
      expect(err.error).toBe(error);
    });
  }
});

describe("token failures", () => {
  it("token-invalid-grant -> 400 invalid_grant", async () => {
    const { request, callback } = await loginAs("token-invalid-grant");
    const err = await rejection(redeem(config, callback, request));
    expect(err.error).toBe("invalid_grant");
    expect(err.status).toBe(400);
  });

  it("token-server-error -> 500 server_error", async () => {
    const first = await loginAs("token-server-error");
    // openid-client only parses OAuth error bodies of 4xx answers, so read this one raw.
    const res = await rawToken(first.request, first.callback);
    expect(res.status).toBe(500);
    expect(res.body.error).toBe("server_error");
    const second = await loginAs("token-server-error");
    const err = await rejection(redeem(config, second.callback, second.request));
    expect(err.error).toBeUndefined();
  });

  it(`token-slow succeeds after the configured delay (IDP_TOKEN_SLOW_MS=${TOKEN_SLOW_MS})`, async () => {
    const { request, callback } = await loginAs("token-slow");
    const started = performance.now();
    const tokens = await redeem(config, callback, request);
    const elapsed = performance.now() - started;
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.claims()!.sub).toBeTruthy();
    expect(elapsed).toBeGreaterThanOrEqual(TOKEN_SLOW_MS - 5);
  });
});

describe("ID token failures", () => {
  // openid-client itself refuses these.
  for (const [login, claim] of [["id-expired", "exp"], ["id-wrong-aud", "aud"], ["id-wrong-iss", "iss"], ["id-bad-nonce", "nonce"]]) {
    it(`${login}: openid-client rejects the ID token for its "${claim}" claim`, async () => {
      const { request, callback } = await loginAs(login!);
      const err = await rejection(redeem(config, callback, request));
      expect(err.code).toMatch(/^OAUTH_JWT_(CLAIM_COMPARISON|TIMESTAMP_CHECK)_FAILED$/);
      expect(err.claim).toBe(claim);
    });
  }

  it("what those ID tokens carry: exp in the past, another audience, another issuer, another nonce", async () => {
    const raw = async (login: string) => {
      const { request, callback } = await loginAs(login);
      return { request, claims: decodeJwt(await rawIdToken(request, callback)) };
    };
    expect((await raw("id-expired")).claims.exp!).toBeLessThan(Date.now() / 1000);
    const aud = (await raw("id-wrong-aud")).claims.aud;
    expect(aud === "dev-client" || (Array.isArray(aud) && aud.includes("dev-client"))).toBe(false);
    expect((await raw("id-wrong-iss")).claims.iss).not.toBe(idp.issuer);
    const badNonce = await raw("id-bad-nonce");
    expect(badNonce.claims.nonce).not.toBe(badNonce.request.nonce);
  });

  // openid-client (like OIDC Core) does not check these; a relying party that needs a verified
  // email or a sane iat must, so the tests assert what such a check sees.
  it("id-missing-email: a valid ID token without email", async () => {
    const { claims, tokens } = await codeFlow(config, { login: "id-missing-email" });
    expect(claims.email).toBeUndefined();
    expect(decodeJwt(tokens.id_token!)).not.toHaveProperty("email");
  });

  it("id-email-unverified: email_verified is false", async () => {
    const { claims } = await codeFlow(config, { login: "id-email-unverified" });
    expect(typeof claims.email).toBe("string");
    expect(claims.email_verified).toBe(false);
  });

  it("id-future-iat: iat lies in the future, and a JWT validator with a max token age rejects it", async () => {
    const { tokens } = await codeFlow(config, { login: "id-future-iat" });
    const claims = decodeJwt(tokens.id_token!);
    expect(claims.iat!).toBeGreaterThan(Date.now() / 1000 + 30);
    const jwks = createRemoteJWKSet(new URL(`${idp.base}/jwks`));
    await expect(
      jwtVerify(tokens.id_token!, jwks, { issuer: idp.issuer, audience: "dev-client", maxTokenAge: "1h" }),
    ).rejects.toThrow(/iat/);
  });
});

describe("claim variants", () => {
  const claimsOf = async (login: string) => {
    const { claims, tokens } = await codeFlow(config, { login });
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    return { claims: claims as Record<string, unknown>, info: info as Record<string, unknown> };
  };

  it("admin has admin in roles or groups, in the ID token and userinfo", async () => {
    const { claims, info } = await claimsOf("admin");
    expect(roleLike(claims)).toContain("admin");
    expect(roleLike(info)).toContain("admin");
  });

  it("viewer has viewer and not admin", async () => {
    const { claims } = await claimsOf("viewer");
    expect(roleLike(claims)).toContain("viewer");
    expect(roleLike(claims)).not.toContain("admin");
  });

  it("no-groups has no groups; many-groups has many", async () => {
    const none = (await claimsOf("no-groups")).claims;
    expect(Array.isArray(none.groups) ? none.groups : []).toEqual([]);
    const many = await claimsOf("many-groups");
    expect(Array.isArray(many.claims.groups)).toBe(true);
    expect((many.claims.groups as unknown[]).length).toBeGreaterThanOrEqual(5);
    expect(many.info.groups).toEqual(many.claims.groups);
  });

  it("tenant-a-admin and tenant-b-viewer carry different tenants and their roles", async () => {
    const a = (await claimsOf("tenant-a-admin")).claims;
    const b = (await claimsOf("tenant-b-viewer")).claims;
    expect(typeof a.tenant).toBe("string");
    expect(typeof b.tenant).toBe("string");
    expect(a.tenant).not.toBe(b.tenant);
    expect(String(a.tenant).toLowerCase()).toMatch(/a/);
    expect(String(b.tenant).toLowerCase()).toMatch(/b/);
    expect(roleLike(a)).toContain("admin");
    expect(roleLike(b)).toContain("viewer");
  });

  it("unicode-name has a non-ASCII name, intact in the ID token and userinfo", async () => {
    const { claims, info } = await claimsOf("unicode-name");
    // deno-lint-ignore no-control-regex
    expect(String(claims.name)).toMatch(/[^\x00-\x7f]/);
    expect(info.name).toBe(claims.name);
  });

  it("no-email has no email in the ID token or userinfo", async () => {
    const { claims, info } = await claimsOf("no-email");
    expect(claims.email).toBeUndefined();
    expect(info.email).toBeUndefined();
  });

  it("unverified-email has an email with email_verified false", async () => {
    const { claims, info } = await claimsOf("unverified-email");
    expect(typeof claims.email).toBe("string");
    expect(claims.email_verified).toBe(false);
    expect(info.email_verified).toBe(false);
  });

  it("bob is a normal user with his own subject", async () => {
    const { claims } = await claimsOf("bob");
    expect(claims.email).toBe("bob@example.test");
    expect(claims.name).toBe("bob");
  });
});

describe("userinfo failures", () => {
  it("userinfo-401: the token is accepted at /token but userinfo says 401", async () => {
    const { tokens, claims } = await codeFlow(config, { login: "userinfo-401" });
    const res = await userinfo(`${idp.base}/userinfo`, `Bearer ${tokens.access_token}`);
    expect(res.status).toBe(401);
    const err = await rejection(client.fetchUserInfo(config, tokens.access_token, claims.sub));
    expect(err.status).toBe(401);
  });

  it("userinfo-500: userinfo answers 500", async () => {
    const { tokens, claims } = await codeFlow(config, { login: "userinfo-500" });
    const res = await userinfo(`${idp.base}/userinfo`, `Bearer ${tokens.access_token}`);
    expect(res.status).toBe(500);
    await rejection(client.fetchUserInfo(config, tokens.access_token, claims.sub));
  });

  it("userinfo-sub-mismatch: userinfo's sub differs and openid-client rejects it", async () => {
    const { tokens, claims } = await codeFlow(config, { login: "userinfo-sub-mismatch" });
    const res = await userinfo(`${idp.base}/userinfo`, `Bearer ${tokens.access_token}`);
    expect(res.status).toBe(200);
    expect(typeof res.body.sub).toBe("string");
    expect(res.body.sub).not.toBe(claims.sub);
    await rejection(client.fetchUserInfo(config, tokens.access_token, claims.sub));
  });
});

describe("key cases", () => {
  it("key-rotated: signed by rotated-key-2, which /jwks publishes, so it verifies", async () => {
    const { tokens } = await codeFlow(config, { login: "key-rotated" });
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe("rotated-key-2");
    const jwks = createRemoteJWKSet(new URL(`${idp.base}/jwks`));
    await expect(jwtVerify(tokens.id_token!, jwks, { issuer: idp.issuer, audience: "dev-client" })).resolves.toBeTruthy();
  });

  it("kid-not-found: the kid is not in /jwks and openid-client rejects the ID token", async () => {
    const { request, callback } = await loginAs("kid-not-found");
    const err = await rejection(redeem(config, callback, request));
    expect(err.message).toBeTruthy();
    const keys = (await getJson<{ keys: { kid: string }[] }>(`${idp.base}/jwks`)).body.keys.map((k) => k.kid);
    const { request: r2, callback: c2 } = await loginAs("kid-not-found");
    const idToken = await rawIdToken(r2, c2);
    const kid = decodeProtectedHeader(idToken).kid;
    expect(typeof kid).toBe("string");
    expect(keys).not.toContain(kid);
  });

  it("bad-signature: kid bad-sig-key, and the signature does not verify", async () => {
    const { request, callback } = await loginAs("bad-signature");
    await rejection(redeem(config, callback, request));
    const { request: r2, callback: c2 } = await loginAs("bad-signature");
    const idToken = await rawIdToken(r2, c2);
    expect(decodeProtectedHeader(idToken).kid).toBe("bad-sig-key");
    const jwks = createRemoteJWKSet(new URL(`${idp.base}/jwks`));
    await expect(jwtVerify(idToken, jwks)).rejects.toThrow(/signature/i);
  });
});

describe("login page quick picks", () => {
  it("lists scenarios grouped by category in a stable order", async () => {
    const page = async () => {
      const request = await authRequest(config);
      const res = await getAuthorize(request.url);
      expect(res.status).toBe(200);
      return res.text();
    };
    const first = await page();
    const second = await page();
    const categories = loginCategories(first);
    expect(categories).toEqual(Object.keys(BUILTIN_BY_CATEGORY));
    // Each builtin scenario is a quick pick in its own category's section.
    for (const [category, logins] of Object.entries(BUILTIN_BY_CATEGORY)) {
      const section = new RegExp(`<section\\b[^>]*data-category="${category}"[^>]*>([\\s\\S]*?)</section>`, "i").exec(first);
      expect(quickPickLogins(section?.[1] ?? ""), category).toEqual(logins);
    }
    expect(loginCategories(second)).toEqual(categories);
    expect(quickPickLogins(second)).toEqual(quickPickLogins(first));
    const logins = quickPickLogins(first);
    for (const login of ["alice", "bob", "admin", "fail-access-denied", "token-slow", "id-expired", "userinfo-401", "key-rotated"]) {
      expect(logins, login).toContain(login);
    }
    // Each group has a heading.
    for (const section of first.matchAll(/<section\b[^>]*data-category="[^"]*"[^>]*>([\s\S]*?)<\/section>/gi)) {
      expect(section[1]).toMatch(/<h2\b/i);
    }
  });

  it("clicking a quick-pick button submits the login form with that login (browser form semantics)", async () => {
    const request = await authRequest(config);
    const html = await (await getAuthorize(request.url)).text();
    const form = /<form\b[^>]*\bid="login-form"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
    expect(form).not.toBeNull();
    const formHtml = form![1] ?? "";
    const formTag = attributes(/<form\b[^>]*>/i.exec(form![0])![0]);
    expect((formTag.method ?? "get").toLowerCase()).toBe("post");
    const buttonTag = /<button\b[^>]*\bdata-login="bob"[^>]*>/i.exec(html)?.[0];
    expect(buttonTag).toBeDefined();
    const button = attributes(buttonTag!);
    // The button belongs to the login form (inside it, or via form="login-form") and submits it.
    expect(formHtml.includes(buttonTag!) || button.form === "login-form").toBe(true);
    expect(button.type === undefined || button.type === "submit").toBe(true);
    // What a browser sends: the form's named inputs plus the clicked button's name=value.
    const body = new URLSearchParams();
    for (const m of formHtml.matchAll(/<input\b[^>]*>/gi)) {
      const a = attributes(m[0]);
      if (a.name && !(a.type === "checkbox" || a.type === "radio")) body.append(a.name, a.value ?? "");
    }
    if (button.name) body.append(button.name, button.value ?? "");
    const action = new URL(formTag.action ?? request.url.href, request.url);
    const res = await fetch(action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    const callback = new URL(res.headers.get("location")!);
    const tokens = await redeem(config, callback, request);
    expect(tokens.claims()!.name).toBe("bob");
  });
});

describe("POST /debug/scenarios", () => {
  it("adds a scenario usable at once, listed on the login page", async () => {
    const res = await fetch(`${idp.base}/debug/scenarios`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        login: "  QA-Robot ",
        roles: ["robot", "  "],
        email: "robot@qa.test",
        name: "QA Robot",
        category: "Robots",
        claims: { team: "qa" },
      }),
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created.login).toBe("qa-robot");

    const { claims, tokens } = await codeFlow(config, { login: "qa-robot" });
    expect(claims.email).toBe("robot@qa.test");
    expect(claims.name).toBe("QA Robot");
    expect(claims.roles).toEqual(["robot"]);
    expect(claims.team).toBe("qa");
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info.team).toBe("qa");

    const request = await authRequest(config);
    const html = await (await getAuthorize(request.url)).text();
    expect(loginCategories(html)).toContain("Robots");
    expect(quickPickLogins(html)).toContain("qa-robot");
  });

  it("a scenario's claims cannot set the token's own claims (sid, cnf, act, client_id, scope)", async () => {
    const forged = {
      sid: "not-the-session",
      cnf: { jkt: "attacker-key" },
      act: { sub: "admin" },
      may_act: { sub: "x" },
      client_id: "ops",
      scope: "admin",
      team: "kept",
    };
    const res = await fetch(`${idp.base}/debug/scenarios`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ login: "token-claims", claims: forged }),
    });
    expect(res.status).toBe(201);
    const { claims, tokens } = await codeFlow(config, { login: "token-claims" });
    expect(claims.team).toBe("kept");
    expect(typeof claims.sid).toBe("string");
    expect(claims.sid).not.toBe("not-the-session");
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    for (const name of ["cnf", "act", "may_act", "client_id", "scope", "sid"]) {
      expect(claims[name], `ID token ${name}`).not.toEqual(forged[name as keyof typeof forged]);
      expect(info[name], `userinfo ${name}`).toBeUndefined();
    }
  });

  it("an invalid scenario body is 400 and adds nothing", async () => {
    for (const body of ["{not json", JSON.stringify({ name: "no login" }), JSON.stringify({ login: "x", groups: "not-a-list" })]) {
      const res = await fetch(`${idp.base}/debug/scenarios`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(res.status, body).toBe(400);
      await res.arrayBuffer();
    }
    const request = await authRequest(config);
    const html = await (await getAuthorize(request.url)).text();
    expect(quickPickLogins(html)).not.toContain("x");
  });
});

async function rawToken(request: Awaited<ReturnType<typeof authRequest>>, callback: URL) {
  const res = await fetch(`${idp.base}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: callback.searchParams.get("code")!,
      redirect_uri: request.url.searchParams.get("redirect_uri")!,
      client_id: "dev-client",
      code_verifier: request.verifier!,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function rawIdToken(request: Awaited<ReturnType<typeof authRequest>>, callback: URL): Promise<string> {
  const res = await rawToken(request, callback);
  expect(res.status).toBe(200);
  return res.body.id_token as string;
}
