/**
 * Identity provider: /token and /authorize (the authorization request and the login form) against
 * malformed, missing, repeated and wrong parameters, as one table. Each row is one request (after an
 * optional setup) and the documented answer: an OAuth JSON error with its status, a 400/401 HTML
 * page without a redirect, an error redirect to the registered redirect URI, or a 405. For every
 * row: never a 5xx (`failOnServerErrors`), no `Location` unless the row expects an error redirect,
 * and the stored state (debug counts) is the same after the request as before it (`checkRow` in
 * idp-malformed-helpers.ts). The other endpoints' table is idp-malformed-other.test.ts.
 *
 * After the table, a check whose expectation a row cannot state: a refused code_verifier does not
 * spend the code.
 */
import { describe, expect, it } from "vitest";
import { authRequest, basicAuth, client, interactiveLogin, postForm, REDIRECT_URI, WEB_APP_SECRET } from "./idp-helpers.ts";
import {
  checkRow,
  expectOAuthError,
  FORM,
  form,
  JSON_TYPE,
  leavesStateUnchanged,
  omit,
  post,
  query,
  type Row,
  type Setup,
  unsignedProof,
  useMalformedIdp,
} from "./idp-malformed-helpers.ts";

const ctx = useMalformedIdp();

const AUTHZ = { client_id: "dev-client", redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", state: "st" };
const CODE_GRANT = (s: Setup) => ({
  grant_type: "authorization_code",
  client_id: "dev-client",
  redirect_uri: REDIRECT_URI,
  code: s.code,
  code_verifier: s.verifier,
});
const UNREGISTERED_REDIRECTS = [
  ["trailing slash", `${REDIRECT_URI}/`],
  ["upper-case host", REDIRECT_URI.replace("127.0.0.1", "127.0.0.1".toUpperCase()).replace("http://", "HTTP://")],
  ["extra query", `${REDIRECT_URI}?next=/admin`],
  ["fragment", `${REDIRECT_URI}#x`],
  ["path prefix", REDIRECT_URI.replace("/callback", "/call")],
  ["path suffix", `${REDIRECT_URI}/../evil`],
  // 127.0.0.1 is a loopback IP literal: any port of it matches (RFC 8252 §7.3); localhost is a name.
  ["other port of localhost", "http://localhost:3001/callback"],
  ["https", REDIRECT_URI.replace("http:", "https:")],
  ["other host", "http://evil.test/callback"],
  ["not a URL", "callback"],
  ["another client's", "http://localhost:8080/callback"],
] as const;

const rows: Row[] = [
  // -- /token ----------------------------------------------------------------------------------
  { name: "token: no body", request: () => post("/token", ""), expect: { oauth: "invalid_request", status: 400 } },
  {
    name: "token: JSON body",
    request: () => post("/token", JSON.stringify({ grant_type: "client_credentials" }), JSON_TYPE),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token: text/plain body",
    request: () => post("/token", "grant_type=authorization_code", { "content-type": "text/plain" }),
    expect: { oauth: "invalid_request", status: 400 },
  },
  { name: "token: broken percent-encoding", request: () => post("/token", "%%%=%zz&&=="), expect: { oauth: "invalid_request", status: 400 } },
  {
    name: "token: empty grant_type",
    request: () => post("/token", form({ grant_type: "", client_id: "dev-client" })),
    expect: { oauth: "invalid_request", status: 400 },
  },
  { name: "token: grant_type absent", request: () => post("/token", form({ client_id: "dev-client" })), expect: { oauth: "invalid_request", status: 400 } },
  {
    name: "token: repeated grant_type",
    request: () => post("/token", "grant_type=refresh_token&grant_type=refresh_token&client_id=dev-client"),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token: unknown grant_type",
    request: () => post("/token", form({ grant_type: "password", client_id: "dev-client", username: "a", password: "b" })),
    expect: { oauth: "unsupported_grant_type", status: 400 },
  },
  {
    name: "token: no client_id",
    request: () => post("/token", form({ grant_type: "authorization_code", code: "x" })),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token: unknown client",
    request: () => post("/token", form({ grant_type: "authorization_code", client_id: "nobody", code: "x" })),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "token: Basic not base64",
    request: () => ({ ...post("/token", form({ grant_type: "client_credentials" })), headers: { ...FORM, authorization: "Basic ***" } }),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "token: Basic without colon",
    request: () => ({ ...post("/token", form({ grant_type: "client_credentials" })), headers: { ...FORM, authorization: `Basic ${btoa("web-app")}` } }),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "token: Basic with bad percent-encoding",
    request: () => ({ ...post("/token", form({ grant_type: "client_credentials" })), headers: { ...FORM, authorization: `Basic ${btoa("web-app:%zz")}` } }),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "token: Basic and client_secret together",
    request: () => ({
      ...post("/token", form({ grant_type: "client_credentials", client_secret: WEB_APP_SECRET })),
      headers: { ...FORM, authorization: basicAuth("web-app", WEB_APP_SECRET) },
    }),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token: Basic and a different client_id",
    request: () => ({
      ...post("/token", form({ grant_type: "client_credentials", client_id: "dev-client" })),
      headers: { ...FORM, authorization: basicAuth("web-app", WEB_APP_SECRET) },
    }),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token: confidential client without secret",
    request: () => post("/token", form({ grant_type: "client_credentials", client_id: "web-app" })),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "token: wrong secret",
    request: () => post("/token", form({ grant_type: "client_credentials", client_id: "web-app", client_secret: "web-app-secreT" })),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "token code: missing code",
    request: () => post("/token", form({ grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI })),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token code: unknown code",
    request: () => post("/token", form({ grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI, code: "x".repeat(43) })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: short garbage code",
    request: () => post("/token", form({ grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI, code: "garbage" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: missing redirect_uri",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), redirect_uri: "" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: redirect_uri with a trailing slash",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), redirect_uri: `${REDIRECT_URI}/` })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: another registered redirect_uri than the authorized one",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), redirect_uri: "http://localhost:3000/callback" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: missing code_verifier",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), code_verifier: "" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: too short code_verifier",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), code_verifier: "abc" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: code_verifier with bad characters",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), code_verifier: `${s.verifier.slice(0, -1)}!` })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: a different code_verifier",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), code_verifier: s.verifier.split("").reverse().join("") })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: another client's code",
    setup: true,
    request: (s) => post("/token", form({ ...CODE_GRANT(s), client_id: "public-spa" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token code: repeated code",
    setup: true,
    request: (s) => post("/token", `${form(CODE_GRANT(s))}&code=${s.code}`),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token code: garbage DPoP header",
    setup: true,
    request: (s) => ({ ...post("/token", form(CODE_GRANT(s))), headers: { ...FORM, dpop: "garbage" } }),
    expect: { oauth: "invalid_dpop_proof", status: 400 },
  },
  {
    name: "token code: two DPoP proofs",
    setup: true,
    request: (s) => ({ ...post("/token", form(CODE_GRANT(s))), headers: { ...FORM, dpop: "a.b.c, d.e.f" } }),
    expect: { oauth: "invalid_dpop_proof", status: 400 },
  },
  {
    name: "token code: unsigned (alg none) DPoP proof",
    setup: true,
    request: (s) => ({ ...post("/token", form(CODE_GRANT(s))), headers: { ...FORM, dpop: unsignedProof(`${ctx.idp.issuer}/token`) } }),
    expect: { oauth: "invalid_dpop_proof", status: 400 },
  },
  {
    name: "token refresh: missing refresh_token",
    request: () => post("/token", form({ grant_type: "refresh_token", client_id: "dev-client" })),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token refresh: unknown refresh_token",
    request: () => post("/token", form({ grant_type: "refresh_token", client_id: "dev-client", refresh_token: "nope", scope: "openid \u0000" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token device: missing device_code",
    request: () => post("/token", form({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", client_id: "dev-client" })),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "token device: unknown device_code",
    request: () => post("/token", form({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", client_id: "dev-client", device_code: "nope" })),
    expect: { oauth: "invalid_grant", status: 400 },
  },
  {
    name: "token client_credentials: public client",
    request: () => post("/token", form({ grant_type: "client_credentials", client_id: "dev-client" })),
    expect: { oauth: "unauthorized_client", status: 400 },
  },
  {
    name: "token client_credentials: scope openid",
    request: () => ({
      ...post("/token", form({ grant_type: "client_credentials", scope: "openid" })),
      headers: { ...FORM, authorization: basicAuth("web-app", WEB_APP_SECRET) },
    }),
    expect: { oauth: "invalid_scope", status: 400 },
  },
  { name: "token: GET", request: () => ({ path: "/token" }), expect: { status: 405 } },
  { name: "token: PUT", request: () => ({ ...post("/token", form({ grant_type: "client_credentials" })), method: "PUT" }), expect: { status: 405 } },

  // -- /authorize GET: before the client and redirect URI are known, a 400 page ---------------
  { name: "authorize: no parameters", request: () => ({ path: "/authorize" }), expect: { page: 400 } },
  { name: "authorize: missing client_id", request: () => query("/authorize", { ...AUTHZ, client_id: "" }), expect: { page: 400 } },
  { name: "authorize: client_id absent", request: () => query("/authorize", omit(AUTHZ, "client_id")), expect: { page: 400 } },
  { name: "authorize: unknown client_id", request: () => query("/authorize", { ...AUTHZ, client_id: "nobody" }), expect: { page: 400 } },
  { name: "authorize: repeated client_id", request: () => query("/authorize", `${new URLSearchParams(AUTHZ)}&client_id=dev-client`), expect: { page: 400 } },
  { name: "authorize: missing redirect_uri", request: () => query("/authorize", { ...AUTHZ, redirect_uri: "" }), expect: { page: 400 } },
  { name: "authorize: redirect_uri absent", request: () => query("/authorize", omit(AUTHZ, "redirect_uri")), expect: { page: 400 } },
  {
    name: "authorize: repeated redirect_uri",
    request: () => query("/authorize", `${new URLSearchParams(AUTHZ)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`),
    expect: { page: 400 },
  },
  ...UNREGISTERED_REDIRECTS.map(([what, uri]): Row => ({
    name: `authorize: redirect_uri not registered (${what})`,
    request: () => query("/authorize", { ...AUTHZ, redirect_uri: uri, response_type: "token" }),
    expect: { page: 400 },
  })),
  // -- /authorize GET: afterwards, an error redirect with state and iss -------------------------
  {
    name: "authorize: missing response_type",
    request: () => query("/authorize", { ...AUTHZ, response_type: "" }),
    expect: { redirectError: "invalid_request" },
  },
  { name: "authorize: response_type absent", request: () => query("/authorize", omit(AUTHZ, "response_type")), expect: { redirectError: "invalid_request" } },
  {
    name: "authorize: response_type token",
    request: () => query("/authorize", { ...AUTHZ, response_type: "token" }),
    expect: { redirectError: "unsupported_response_type" },
  },
  {
    name: "authorize: response_type code id_token",
    request: () => query("/authorize", { ...AUTHZ, response_type: "code id_token" }),
    expect: { redirectError: "unsupported_response_type" },
  },
  {
    name: "authorize: repeated state",
    request: () => query("/authorize", `${new URLSearchParams(AUTHZ)}&state=again`),
    expect: { redirectError: "invalid_request" },
  },
  { name: "authorize: missing scope", request: () => query("/authorize", { ...AUTHZ, scope: "" }), expect: { redirectError: "invalid_scope" } },
  {
    name: "authorize: scope without openid",
    request: () => query("/authorize", { ...AUTHZ, scope: "profile email" }),
    expect: { redirectError: "invalid_scope" },
  },
  {
    name: "authorize: malformed scope",
    request: () => query("/authorize", { ...AUTHZ, scope: 'openid "quoted"' }),
    expect: { redirectError: "invalid_scope" },
  },
  {
    name: "authorize: code_challenge too short",
    request: () => query("/authorize", { ...AUTHZ, code_challenge: "abc", code_challenge_method: "S256" }),
    expect: { redirectError: "invalid_request" },
  },
  {
    name: "authorize: code_challenge with bad characters",
    request: () => query("/authorize", { ...AUTHZ, code_challenge: "!".repeat(43), code_challenge_method: "S256" }),
    expect: { redirectError: "invalid_request" },
  },
  {
    name: "authorize: unknown code_challenge_method",
    request: () => query("/authorize", { ...AUTHZ, code_challenge: "a".repeat(43), code_challenge_method: "S512" }),
    expect: { redirectError: "invalid_request" },
  },
  {
    name: "authorize: code_challenge_method without challenge",
    request: () => query("/authorize", { ...AUTHZ, code_challenge_method: "S256" }),
    expect: { redirectError: "invalid_request" },
  },
  {
    name: "authorize: public-spa without PKCE",
    request: () => query("/authorize", { ...AUTHZ, client_id: "public-spa" }),
    expect: { redirectError: "invalid_request" },
  },
  { name: "authorize: unknown prompt", request: () => query("/authorize", { ...AUTHZ, prompt: "bogus" }), expect: { redirectError: "invalid_request" } },
  {
    name: "authorize: prompt none with login",
    request: () => query("/authorize", { ...AUTHZ, prompt: "none login" }),
    expect: { redirectError: "invalid_request" },
  },
  { name: "authorize: negative max_age", request: () => query("/authorize", { ...AUTHZ, max_age: "-1" }), expect: { redirectError: "invalid_request" } },
  { name: "authorize: non-numeric max_age", request: () => query("/authorize", { ...AUTHZ, max_age: "1e3" }), expect: { redirectError: "invalid_request" } },
  { name: "authorize: huge max_age", request: () => query("/authorize", { ...AUTHZ, max_age: "99999999999" }), expect: { redirectError: "invalid_request" } },
  {
    name: "authorize: prompt none without a session",
    request: () => query("/authorize", { ...AUTHZ, prompt: "none" }),
    expect: { redirectError: "login_required" },
  },
  { name: "authorize: PUT", request: () => ({ ...post("/authorize", form(AUTHZ)), method: "PUT" }), expect: { status: 405 } },

  // -- /authorize POST (the login form) ---------------------------------------------------------
  { name: "login: JSON body", request: () => post("/authorize", JSON.stringify({ ...AUTHZ, login: "alice" }), JSON_TYPE), expect: { page: 400 } },
  { name: "login: unknown client", request: () => post("/authorize", form({ ...AUTHZ, client_id: "nobody", login: "alice" })), expect: { page: 400 } },
  {
    name: "login: unregistered redirect_uri",
    request: () => post("/authorize", form({ ...AUTHZ, redirect_uri: "http://evil.test/cb", login: "alice" })),
    expect: { page: 400 },
  },
  { name: "login: empty login", request: () => post("/authorize", form({ ...AUTHZ, login: "  " })), expect: { page: 400 } },
  { name: "login: login of 300 characters", request: () => post("/authorize", form({ ...AUTHZ, login: "a".repeat(300) })), expect: { page: 400 } },
  {
    name: "login: seeded user, wrong password",
    request: () => post("/authorize", form({ ...AUTHZ, login: "carol", password: "nope" })),
    expect: { page: 401, text: "invalid login or password" },
  },
  {
    name: "login: seeded user, no password",
    request: () => post("/authorize", form({ ...AUTHZ, login: "carol" })),
    expect: { page: 401, text: "invalid login or password" },
  },
  {
    name: "login: bad response_type (redirect, no session)",
    request: () => post("/authorize", form({ ...AUTHZ, response_type: "token", login: "alice" })),
    expect: { redirectError: "unsupported_response_type" },
  },
];

describe("malformed and missing parameters at every endpoint", () => {
  for (const row of rows) it(row.name, () => checkRow(ctx, row));
});

describe("specific checks a row cannot express", () => {
  it("token code: a missing or wrong code_verifier is refused and does not spend the code; the right one still redeems it", async () => {
    const request = await authRequest(ctx.config);
    const { callback } = await interactiveLogin(request.url, "alice");
    const grant = { grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI, code: callback.searchParams.get("code")! };
    await leavesStateUnchanged(ctx.idp.base, async () => {
      const missing = await postForm(`${ctx.idp.base}/token`, grant);
      expect(missing.status).toBe(400);
      expect(["invalid_grant", "invalid_request"]).toContain(missing.body.error);
      expectOAuthError(await postForm(`${ctx.idp.base}/token`, { ...grant, code_verifier: client.randomPKCECodeVerifier() }), 400, "invalid_grant");
    });
    const ok = await postForm(`${ctx.idp.base}/token`, { ...grant, code_verifier: request.verifier! });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});
