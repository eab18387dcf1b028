/**
 * Identity provider: bad input gets a documented 4xx (never a 500) and changes nothing stored.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  REDIRECT_URI,
  authRequest,
  client,
  debugCounts,
  getAuthorize,
  interactiveLogin,
  postForm,
  resetIdp,
  rp,
  startIdp,
  type DebugCounts,
  type Idp,
  failOnServerErrors,
} from "./idp-helpers.ts";

let idp: Idp;
let config: client.Configuration;
let countsBefore: DebugCounts | undefined;

failOnServerErrors();
beforeAll(async () => {
  idp = await startIdp();
  config = await rp(idp.issuer);
});
afterAll(() => idp?.svc.stop());

/** Each test's bad requests must leave the stored state exactly as the test's setup left it. */
let expectUnchanged = true;
beforeEach(async () => {
  await resetIdp(idp.base);
  expectUnchanged = true;
  countsBefore = undefined;
});
afterEach(async () => {
  if (expectUnchanged && countsBefore) expect(await debugCounts(idp.base)).toEqual(countsBefore);
});
const snapshot = async () => {
  countsBefore = await debugCounts(idp.base);
};

const token = (params: Record<string, string>) => postForm(`${idp.base}/token`, params);

/** A fresh code for dev-client with an S256 challenge. */
async function freshCode() {
  const request = await authRequest(config);
  const { callback } = await interactiveLogin(request.url, "alice");
  return { request, code: callback.searchParams.get("code")! };
}

function expectOAuthError(res: { status: number; body: Record<string, unknown>; headers: Headers }, status: number, error: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe("string");
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("cache-control")).toMatch(/no-store/);
}

describe("/token", () => {
  it("no grant_type is invalid_request; an unknown one unsupported_grant_type", async () => {
    await snapshot();
    expectOAuthError(await token({ client_id: "dev-client" }), 400, "invalid_request");
    expectOAuthError(await token({ grant_type: "password", client_id: "dev-client", username: "a", password: "b" }), 400, "unsupported_grant_type");
  });

  it("a missing code is invalid_request; a garbage code invalid_grant", async () => {
    await snapshot();
    expectOAuthError(
      await token({ grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI }),
      400,
      "invalid_request",
    );
    expectOAuthError(
      await token({ grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI, code: "garbage" }),
      400,
      "invalid_grant",
    );
  });

  it("a missing or wrong code_verifier is invalid_grant (or invalid_request) and does not spend the code", async () => {
    const { request, code } = await freshCode();
    await snapshot();
    const base = { grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI, code };
    const missing = await token(base);
    expect(missing.status).toBe(400);
    expect(["invalid_grant", "invalid_request"]).toContain(missing.body.error);
    const wrong = await token({ ...base, code_verifier: client.randomPKCECodeVerifier() });
    expectOAuthError(wrong, 400, "invalid_grant");
    expect(await debugCounts(idp.base)).toEqual(countsBefore);
    // The right verifier still redeems it.
    const ok = await token({ ...base, code_verifier: request.verifier! });
    expect(ok.status).toBe(200);
    expectUnchanged = false;
  });

  it("a redirect_uri differing from the authorization request is invalid_grant", async () => {
    const { request, code } = await freshCode();
    await snapshot();
    const res = await token({
      grant_type: "authorization_code",
      client_id: "dev-client",
      redirect_uri: "http://localhost:3000/callback",
      code,
      code_verifier: request.verifier!,
    });
    expectOAuthError(res, 400, "invalid_grant");
  });

  it("an unknown client is 401 invalid_client", async () => {
    await snapshot();
    expectOAuthError(await token({ grant_type: "authorization_code", client_id: "nobody", code: "x", redirect_uri: REDIRECT_URI }), 401, "invalid_client");
  });

  it("a non-form body is a 400, not a 500", async () => {
    await snapshot();
    for (const [type, body] of [
      ["application/json", JSON.stringify({ grant_type: "authorization_code", code: "x" })],
      ["text/plain", "grant_type=authorization_code"],
      ["application/x-www-form-urlencoded", "%%%=%zz&&=="],
    ] as const) {
      const res = await fetch(`${idp.base}/token`, { method: "POST", headers: { "content-type": type }, body });
      expect(res.status, type).toBeGreaterThanOrEqual(400);
      expect(res.status, type).toBeLessThan(500);
      const json = (await res.json()) as { error?: string };
      expect(typeof json.error).toBe("string");
    }
  });

  it("GET /token is 405 or 400, not a 500", async () => {
    await snapshot();
    const res = await fetch(`${idp.base}/token`);
    expect([400, 405]).toContain(res.status);
    await res.arrayBuffer();
  });
});

describe("/authorize", () => {
  const authorize = (params: Record<string, string>) =>
    getAuthorize(`${idp.base}/authorize?${new URLSearchParams(params)}`);
  const valid = { client_id: "dev-client", redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", state: "st-1" };

  it("missing client_id or redirect_uri is a 400 page without a redirect", async () => {
    await snapshot();
    for (const drop of ["client_id", "redirect_uri"]) {
      const params: Record<string, string> = { ...valid };
      delete params[drop];
      const res = await authorize(params);
      expect(res.status, drop).toBe(400);
      expect(res.headers.get("location"), drop).toBeNull();
      expect(res.headers.get("content-type")).toMatch(/text\/html/);
      await res.arrayBuffer();
    }
  });

  it("a missing response_type is an invalid_request redirect (the redirect URI is valid)", async () => {
    await snapshot();
    const { response_type: _, ...params } = valid;
    const res = await authorize(params);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get("error")).toBe("invalid_request");
    expect(location.searchParams.get("state")).toBe("st-1");
    expect(location.searchParams.get("iss")).toBe(idp.issuer);
  });

  it("an unsupported response_type is an unsupported_response_type redirect", async () => {
    await snapshot();
    const res = await authorize({ ...valid, response_type: "token" });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.searchParams.get("error")).toBe("unsupported_response_type");
    expect(location.searchParams.get("state")).toBe("st-1");
  });

  it("an unsupported response_type with an unregistered redirect_uri is a 400 page, not a redirect", async () => {
    await snapshot();
    const res = await authorize({ ...valid, response_type: "token", redirect_uri: "http://evil.test/cb" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    await res.arrayBuffer();
  });

  it("a bad code_challenge_method is an invalid_request redirect", async () => {
    await snapshot();
    const res = await authorize({ ...valid, code_challenge: "x".repeat(43), code_challenge_method: "S512" });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });

  it("POST /authorize with a bad client or redirect is a 400 page, with no session made", async () => {
    await snapshot();
    const res = await fetch(`${idp.base}/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...valid, client_id: "nobody", login: "alice", password: "" }),
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.getSetCookie().some((c) => /^idp_session=[^;]+/.test(c) && !/max-age=0/i.test(c))).toBe(false);
    await res.arrayBuffer();
  });

  it("POST /authorize without a login is 400, with no session made", async () => {
    await snapshot();
    const res = await fetch(`${idp.base}/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...valid, login: "   ", password: "" }),
      redirect: "manual",
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get("location")).toBeNull();
    await res.arrayBuffer();
  });
});

describe("/userinfo", () => {
  it("without a token: 401 with WWW-Authenticate", async () => {
    await snapshot();
    const res = await fetch(`${idp.base}/userinfo`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^(Bearer|DPoP)/i);
    await res.arrayBuffer();
  });

  it("with a garbage token or a malformed header: 401 with WWW-Authenticate invalid_token", async () => {
    await snapshot();
    for (const authorization of ["Bearer garbage", "Bearer ", "Basic Zm9vOmJhcg==", "garbage"]) {
      const res = await fetch(`${idp.base}/userinfo`, { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get("www-authenticate"), authorization).toBeTruthy();
      await res.arrayBuffer();
    }
    const res = await fetch(`${idp.base}/userinfo`, { headers: { authorization: "Bearer garbage" } });
    expect(res.headers.get("www-authenticate")).toMatch(/invalid_token/);
    await res.arrayBuffer();
  });
});

describe("/device_authorization", () => {
  it("bad input is a 4xx OAuth error and creates no grant", async () => {
    await snapshot();
    expectOAuthError(await postForm(`${idp.base}/device_authorization`, { client_id: "nobody", scope: "openid" }), 401, "invalid_client");
    expectOAuthError(await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "profile" }), 400, "invalid_scope");
    const noScope = await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client" });
    expect(noScope.status).toBe(400);
    expect(["invalid_scope", "invalid_request"]).toContain(noScope.body.error);
    const json = await fetch(`${idp.base}/device_authorization`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: "dev-client", scope: "openid" }),
    });
    expect(json.status).toBeGreaterThanOrEqual(400);
    expect(json.status).toBeLessThan(500);
    await json.arrayBuffer();
  });

  it("a malformed user code on the device page is a 400 page", async () => {
    await snapshot();
    const res = await fetch(`${idp.base}/device`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ user_code: '<script>alert("xss-1")</script>', action: "approve", login: "alice", password: "" }),
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain("invalid or expired code");
    expect(html).not.toContain('<script>alert("xss-1")');
  });
});

describe("/end-session", () => {
  it("a garbage id_token_hint is 400, not 500", async () => {
    await snapshot();
    for (const hint of ["garbage", "a.b.c", "eyJhbGciOiJub25lIn0.bm90IGpzb24.x"]) {
      const res = await fetch(`${idp.base}/end-session?${new URLSearchParams({ id_token_hint: hint })}`, { redirect: "manual" });
      expect(res.status, hint).toBe(400);
      await res.arrayBuffer();
    }
  });
});
