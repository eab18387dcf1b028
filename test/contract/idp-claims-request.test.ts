/**
 * Claims requests (OIDC Core §5.5): the `claims` parameter, `acr_values` leading to `acr`, and
 * `amr`; and claims per client, scope or subject from configuration (IDP_CLAIM_MAPPINGS).
 */
import { describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import {
  ALICE_SUB,
  authRequest,
  basicAuth,
  client,
  codeFlow,
  getAuthorize,
  getJson,
  interactiveLogin,
  postForm,
  redeem,
  rp,
  sessionCookie,
  useProvider,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

const MAPPINGS = {
  mappings: [
    { client: "web-app", claims: { department: "R&D" } },
    { client: "web-app", access_token: { api_role: "reader" } },
    { scope: "offline_access", id_token: { offline: true } },
    { sub: ALICE_SUB, userinfo: { vip: true } },
  ],
};

const idp = useProvider({ IDP_CLAIM_MAPPINGS: JSON.stringify(MAPPINGS), IDP_ACCESS_TOKEN_FORMAT: "jwt" });

const claimsParam = (value: unknown) => ({ claims: JSON.stringify(value) });

/** The authorization error a redirect carries (query). */
async function redirectError(url: URL | string, init?: RequestInit): Promise<URLSearchParams> {
  const res = await fetch(url, { redirect: "manual", ...init });
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get("location")!).searchParams;
}

describe("discovery", () => {
  it("advertises the claims parameter, the acr values and the claims it can release", async () => {
    const { body } = await getJson<Record<string, unknown>>(`${idp.issuer}/.well-known/openid-configuration`);
    expect(body.claims_parameter_supported).toBe(true);
    expect(body.acr_values_supported).toEqual(["pwd", "mfa"]);
    expect(body.claims_supported).toEqual(expect.arrayContaining(["acr", "amr", "auth_time", "sid", "email", "groups"]));
    // And the names configuration adds (IDP_CLAIM_MAPPINGS), once each.
    expect(body.claims_supported).toEqual(expect.arrayContaining(["department", "api_role", "offline", "vip"]));
    const names = body.claims_supported as string[];
    expect(new Set(names).size).toBe(names.length);
  });
});

describe("acr and amr", () => {
  it("a login is pwd by default: acr and amr in the ID token", async () => {
    const { claims } = await codeFlow(idp.config);
    expect(claims.acr).toBe("pwd");
    expect(claims.amr).toEqual(["pwd"]);
  });

  it("acr_values preselects the level on the login page, and the ID token says which was used", async () => {
    const request = await authRequest(idp.config, { params: { acr_values: "mfa pwd" } });
    const page = await (await getAuthorize(request.url)).text();
    expect(page).toMatch(/<option value="mfa" selected>/);
    const login = await interactiveLogin(request.url, "alice");
    const tokens = await redeem(idp.config, login.callback, request);
    expect(tokens.claims()!.acr).toBe("mfa");
    expect(tokens.claims()!.amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("an essential acr the chosen level does not meet fails with unmet_authentication_requirements, and no session starts", async () => {
    const request = await authRequest(idp.config, { params: claimsParam({ id_token: { acr: { essential: true, values: ["mfa"] } } }) });
    const form = new URLSearchParams(request.url.searchParams);
    form.set("login", "alice");
    form.set("acr", "pwd");
    const res = await fetch(request.url.origin + request.url.pathname, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(302);
    const query = new URL(res.headers.get("location")!).searchParams;
    expect(query.get("error")).toBe("unmet_authentication_requirements");
    expect(query.get("state")).toBe(request.state);
    expect(sessionCookie(res)).toBeUndefined();
  });

  it("an unknown level on the form is a 400 login page", async () => {
    const request = await authRequest(idp.config);
    const form = new URLSearchParams(request.url.searchParams);
    form.set("login", "alice");
    form.set("acr", "gold");
    const res = await fetch(request.url.origin + request.url.pathname, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("unknown authentication level");
  });

  it("a session whose acr does not meet an essential acr is not used silently (login_required), but is for a met one", async () => {
    const first = await authRequest(idp.config);
    const { cookie } = await interactiveLogin(first.url, "alice"); // pwd
    const essentialMfa = claimsParam({ id_token: { acr: { essential: true, value: "mfa" } } });
    const silent = await authRequest(idp.config, { params: { prompt: "none", ...essentialMfa } });
    const refused = await redirectError(silent.url, { headers: { cookie: cookie! } });
    expect(refused.get("error")).toBe("login_required");
    // Without prompt=none: the login page, with mfa preselected.
    const interactive = await authRequest(idp.config, { params: essentialMfa });
    const page = await fetch(interactive.url, { headers: { cookie: cookie! }, redirect: "manual" });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<option value="mfa" selected>/);
    // A voluntary acr_values does not stop a silent answer; the ID token tells the truth.
    const voluntary = await authRequest(idp.config, { params: { prompt: "none", acr_values: "mfa" } });
    const res = await fetch(voluntary.url, { headers: { cookie: cookie! }, redirect: "manual" });
    const callback = new URL(res.headers.get("location")!);
    expect(callback.searchParams.get("code")).toBeTruthy();
    const tokens = await redeem(idp.config, callback, voluntary);
    expect(tokens.claims()!.acr).toBe("pwd");
  });

  it("an id_token sub with a value: never a session or login of another user (§5.5.1)", async () => {
    const first = await authRequest(idp.config);
    const { cookie } = await interactiveLogin(first.url, "alice");
    const forBob = claimsParam({ id_token: { sub: { value: "user-not-alice" } } });
    const silent = await authRequest(idp.config, { params: { prompt: "none", ...forBob } });
    expect((await redirectError(silent.url, { headers: { cookie: cookie! } })).get("error")).toBe("login_required");
    // Signing in as another user than the one asked for: the login page again, nothing started.
    const request = await authRequest(idp.config, { params: forBob });
    const form = new URLSearchParams(request.url.searchParams);
    form.set("login", "alice");
    const res = await fetch(request.url.origin + request.url.pathname, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("user-not-alice");
    expect(sessionCookie(res)).toBeUndefined();
    // The session of the user asked for answers silently.
    const forAlice = await authRequest(idp.config, { params: { prompt: "none", ...claimsParam({ id_token: { sub: { value: ALICE_SUB } } }) } });
    const ok = await fetch(forAlice.url, { headers: { cookie: cookie! }, redirect: "manual" });
    expect(new URL(ok.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });

  it("an essential acr in the userinfo member counts too when the id_token member has one", async () => {
    const first = await authRequest(idp.config);
    const { cookie } = await interactiveLogin(first.url, "alice"); // pwd
    // The id_token member's requirement is met by pwd, the userinfo member's is not: both must be.
    const both = claimsParam({ id_token: { acr: { essential: true, value: "pwd" } }, userinfo: { acr: { essential: true, value: "mfa" } } });
    const silent = await authRequest(idp.config, { params: { prompt: "none", ...both } });
    const refused = await redirectError(silent.url, { headers: { cookie: cookie! } });
    expect(refused.get("error")).toBe("login_required");
  });
});

describe("the claims parameter", () => {
  it("userinfo releases acr, amr and auth_time when its member asks for them", async () => {
    const { tokens, claims } = await codeFlow(idp.config, { params: claimsParam({ userinfo: { acr: null, amr: { essential: true }, auth_time: null } }) });
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, claims.sub);
    expect(info.acr).toBe("pwd");
    expect(info.amr).toEqual(["pwd"]);
    expect(info.auth_time).toBe(claims.auth_time);
    expect(info.email).toBe("alice@example.test");
  });

  it("without it, userinfo leaves the authentication context out", async () => {
    const { tokens, claims } = await codeFlow(idp.config);
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, claims.sub);
    expect(info.acr).toBeUndefined();
    expect(info.amr).toBeUndefined();
  });

  it("the requested context survives a refresh", async () => {
    const { tokens, claims } = await codeFlow(idp.config, {
      scope: "openid offline_access",
      params: { acr_values: "mfa", ...claimsParam({ userinfo: { acr: null } }) },
    });
    const refreshed = await client.refreshTokenGrant(idp.config, tokens.refresh_token!);
    expect(refreshed.claims()!.acr).toBe("mfa");
    const info = await client.fetchUserInfo(idp.config, refreshed.access_token, claims.sub);
    expect(info.acr).toBe("mfa");
  });

  it("members it does not know are ignored (§5.5)", async () => {
    const { claims } = await codeFlow(idp.config, { params: claimsParam({ id_token: { email: null }, other_member: { x: 1 } }) });
    expect(claims.email).toBe("alice@example.test");
  });

  for (
    const [name, value] of [
      ["not JSON", "{id_token"],
      ["a list", "[]"],
      ["a member that is not an object", JSON.stringify({ id_token: ["acr"] })],
      ["essential that is not a boolean", JSON.stringify({ id_token: { acr: { essential: "yes" } } })],
      ["values that is not a list", JSON.stringify({ userinfo: { acr: { values: "mfa" } } })],
      ["JSON nested too deep", "[".repeat(70) + "]".repeat(70)],
    ] as const
  ) {
    it(`a claims parameter that is ${name} is invalid_request, back at the redirect URI`, async () => {
      const request = await authRequest(idp.config, { params: { claims: value } });
      const query = await redirectError(request.url);
      expect(query.get("error")).toBe("invalid_request");
      expect(query.get("error_description")).toMatch(/claims/);
      expect(query.get("state")).toBe(request.state);
    });
  }
});

describe("claims from configuration (IDP_CLAIM_MAPPINGS)", () => {
  it("per client: web-app's ID token, userinfo and JWT access token carry its claims; dev-client's do not", async () => {
    const web = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const { tokens, claims } = await codeFlow(web);
    expect(claims.department).toBe("R&D");
    expect(claims.api_role).toBeUndefined();
    const access = decodeJwt(tokens.access_token);
    expect(access.api_role).toBe("reader");
    expect(access.department).toBe("R&D");
    const info = await client.fetchUserInfo(web, tokens.access_token, claims.sub);
    expect(info.department).toBe("R&D");

    const dev = await codeFlow(idp.config);
    expect(dev.claims.department).toBeUndefined();
  });

  it("per subject (userinfo only) and per scope (ID token only)", async () => {
    const { tokens, claims } = await codeFlow(idp.config, { scope: "openid offline_access" });
    expect(claims.offline).toBe(true);
    expect(claims.vip).toBeUndefined();
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, claims.sub);
    expect(info.vip).toBe(true);
    expect(info.offline).toBeUndefined();
    const bob = await codeFlow(idp.config, { login: "bob" });
    const bobInfo = await client.fetchUserInfo(idp.config, bob.tokens.access_token, bob.claims.sub);
    expect(bobInfo.vip).toBeUndefined();
    expect(bob.claims.offline).toBeUndefined();
  });

  it("claims typed at login win over configured ones", async () => {
    const request = await authRequest(idp.config);
    const form = new URLSearchParams(request.url.searchParams);
    form.set("login", "alice");
    form.set("extra_claims", JSON.stringify({ vip: "typed" }));
    const res = await fetch(request.url.origin + request.url.pathname, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    const tokens = await redeem(idp.config, new URL(res.headers.get("location")!), request);
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, tokens.claims()!.sub);
    expect(info.vip).toBe("typed");
  });

  it("client_credentials tokens get their client's access token claims", async () => {
    const res = await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials" }, { authorization: basicAuth("web-app", WEB_APP_SECRET) });
    expect(res.status).toBe(200);
    const access = decodeJwt(res.body.access_token as string);
    expect(access.api_role).toBe("reader");
    expect(access.department).toBe("R&D");
  });
});
