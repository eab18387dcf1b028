/**
 * Identity provider: every endpoint against malformed, missing, repeated and wrong parameters, as
 * one table. Each row is one request (after an optional setup) and the documented answer: an OAuth
 * JSON error with its status, a 400/401 HTML page without a redirect, an error redirect to the
 * registered redirect URI, or a debug 400. For every row: never a 5xx (`failOnServerErrors`), no
 * `Location` unless the row expects an error redirect, and the stored state (debug counts) is the
 * same after the request as before it.
 *
 * After the table, a few specific checks whose expectation a row cannot state: a refused
 * code_verifier does not spend the code, the `WWW-Authenticate` challenge of /userinfo, and a
 * malformed user code not echoed unescaped.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  authRequest,
  basicAuth,
  client,
  debugCounts,
  failOnServerErrors,
  type Idp,
  interactiveLogin,
  jsonOrText,
  type JsonResponse,
  postForm,
  REDIRECT_URI,
  resetIdp,
  rp,
  startIdp,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

let idp: Idp;
let config: client.Configuration;

failOnServerErrors();
beforeAll(async () => {
  idp = await startIdp({ IDP_USERS: JSON.stringify([{ login: "carol", password: "carol-pw" }]) });
  config = await rp(idp.issuer);
});
afterAll(() => idp?.svc.stop());
afterEach(() => resetIdp(idp.base));

/** What a row expects. */
type Expectation =
  | { oauth: string; status: 400 | 401 }
  | { page: 400 | 401; text?: string }
  | { redirectError: string; to?: string }
  | { status: 400 | 401 | 404 | 405; error?: string };

interface Setup {
  /** An outstanding code for dev-client (S256), its verifier, and the user code of a pending device grant. */
  code: string;
  verifier: string;
  userCode: string;
  accessToken: string;
}

interface Row {
  name: string;
  /** Needs the setup (a code, a pending device grant, an access token) before the request. */
  setup?: boolean;
  request: (s: Setup) => { method?: string; path: string; headers?: Record<string, string>; body?: string };
  expect: Expectation;
}

const FORM = { "content-type": "application/x-www-form-urlencoded" };
const JSON_TYPE = { "content-type": "application/json" };
const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
/** `params` without `key` at all (as opposed to `key` present and empty). */
const omit = (params: Record<string, string>, key: string) => Object.fromEntries(Object.entries(params).filter(([k]) => k !== key));
const post = (path: string, body: string, headers: Record<string, string> = FORM) => ({ method: "POST", path, headers, body });
const query = (path: string, params: Record<string, string> | string) => ({
  path: `${path}?${typeof params === "string" ? params : new URLSearchParams(params)}`,
});

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
    request: (s) => ({ ...post("/token", form(CODE_GRANT(s))), headers: { ...FORM, dpop: unsignedProof(`${idp.issuer}/token`) } }),
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

  // -- /userinfo ----------------------------------------------------------------------------------
  { name: "userinfo: no Authorization", request: () => ({ path: "/userinfo" }), expect: { status: 401, error: "invalid_token" } },
  {
    name: "userinfo: Bearer without token",
    request: () => ({ path: "/userinfo", headers: { authorization: "Bearer" } }),
    expect: { status: 401, error: "invalid_token" },
  },
  {
    name: "userinfo: two tokens",
    request: () => ({ path: "/userinfo", headers: { authorization: "Bearer a b" } }),
    expect: { status: 401, error: "invalid_token" },
  },
  {
    name: "userinfo: Basic",
    request: () => ({ path: "/userinfo", headers: { authorization: basicAuth("a", "b") } }),
    expect: { status: 401, error: "invalid_token" },
  },
  {
    name: "userinfo: unknown token",
    request: () => ({ path: "/userinfo", headers: { authorization: `Bearer ${"x".repeat(43)}` } }),
    expect: { status: 401, error: "invalid_token" },
  },
  {
    name: "userinfo: bearer token sent as DPoP",
    setup: true,
    request: (s) => ({ path: "/userinfo", headers: { authorization: `DPoP ${s.accessToken}` } }),
    expect: { status: 401, error: "invalid_token" },
  },
  {
    name: "userinfo: POST with a query token only",
    request: () => post("/userinfo", form({ access_token: "x".repeat(43) })),
    expect: { status: 401, error: "invalid_token" },
  },
  { name: "userinfo: DELETE", request: () => ({ method: "DELETE", path: "/userinfo" }), expect: { status: 405 } },

  // -- /device_authorization and /device ---------------------------------------------------------
  {
    name: "device_authorization: JSON body",
    request: () => post("/device_authorization", JSON.stringify({ client_id: "dev-client", scope: "openid" }), JSON_TYPE),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "device_authorization: no client_id",
    request: () => post("/device_authorization", form({ scope: "openid" })),
    expect: { oauth: "invalid_request", status: 400 },
  },
  {
    name: "device_authorization: unknown client",
    request: () => post("/device_authorization", form({ client_id: "nobody", scope: "openid" })),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "device_authorization: web-app without secret",
    request: () => post("/device_authorization", form({ client_id: "web-app", scope: "openid" })),
    expect: { oauth: "invalid_client", status: 401 },
  },
  {
    name: "device_authorization: no scope",
    request: () => post("/device_authorization", form({ client_id: "dev-client" })),
    expect: { oauth: "invalid_scope", status: 400 },
  },
  {
    name: "device_authorization: scope without openid",
    request: () => post("/device_authorization", form({ client_id: "dev-client", scope: "profile" })),
    expect: { oauth: "invalid_scope", status: 400 },
  },
  {
    name: "device_authorization: repeated scope",
    request: () => post("/device_authorization", "client_id=dev-client&scope=openid&scope=openid"),
    expect: { oauth: "invalid_request", status: 400 },
  },
  { name: "device_authorization: GET", request: () => ({ path: "/device_authorization" }), expect: { status: 405 } },
  {
    name: "device: JSON body",
    request: () => post("/device", JSON.stringify({ user_code: "ABCD-EFGH", action: "approve" }), JSON_TYPE),
    expect: { page: 400 },
  },
  {
    name: "device: no user_code",
    request: () => post("/device", form({ action: "approve", login: "alice" })),
    expect: { page: 400, text: "invalid or expired code" },
  },
  {
    name: "device: malformed user_code",
    request: () => post("/device", form({ user_code: "<b>1</b>", action: "approve", login: "alice" })),
    expect: { page: 400, text: "invalid or expired code" },
  },
  {
    name: "device: unknown user_code",
    request: () => post("/device", form({ user_code: "BCDF-GHJK", action: "approve", login: "alice" })),
    expect: { page: 400, text: "invalid or expired code" },
  },
  { name: "device: no action", setup: true, request: (s) => post("/device", form({ user_code: s.userCode, login: "alice" })), expect: { page: 400 } },
  {
    name: "device: unknown action",
    setup: true,
    request: (s) => post("/device", form({ user_code: s.userCode, action: "maybe", login: "alice" })),
    expect: { page: 400 },
  },
  {
    name: "device: approve without a login",
    setup: true,
    request: (s) => post("/device", form({ user_code: s.userCode, action: "approve" })),
    expect: { page: 400 },
  },
  {
    name: "device: seeded user, wrong password",
    setup: true,
    request: (s) => post("/device", form({ user_code: s.userCode, action: "approve", login: "carol", password: "x" })),
    expect: { page: 401, text: "invalid login or password" },
  },

  // -- /end-session ---------------------------------------------------------------------------------
  { name: "end-session: id_token_hint not a JWT", request: () => query("/end-session", { id_token_hint: "garbage" }), expect: { page: 400 } },
  {
    name: "end-session: id_token_hint of three junk segments (a.b.c)",
    request: () => query("/end-session", { id_token_hint: "a.b.c" }),
    expect: { page: 400 },
  },
  {
    name: "end-session: id_token_hint without sub",
    request: () => query("/end-session", { id_token_hint: `${b64({ alg: "none" })}.${b64({ iss: "x" })}.` }),
    expect: { page: 400 },
  },
  {
    name: "end-session: id_token_hint with a non-JSON payload",
    request: () => query("/end-session", { id_token_hint: "eyJhbGciOiJub25lIn0.bm90IGpzb24.x" }),
    expect: { page: 400 },
  },
  {
    name: "end-session: unregistered post_logout_redirect_uri",
    request: () => query("/end-session", { post_logout_redirect_uri: "http://evil.test/", state: "s" }),
    expect: { page: 400 },
  },
  {
    name: "end-session: post_logout_redirect_uri with a trailing slash",
    request: () => query("/end-session", { post_logout_redirect_uri: "http://localhost:3000/" }),
    expect: { page: 400 },
  },
  {
    name: "end-session: post_logout_redirect_uri of another client",
    request: () => query("/end-session", { post_logout_redirect_uri: "http://localhost:8080", client_id: "dev-client" }),
    expect: { page: 400 },
  },
  { name: "end-session: unknown client_id", request: () => query("/end-session", { client_id: "nobody" }), expect: { page: 400 } },
  { name: "end-session: repeated state", request: () => query("/end-session", "state=a&state=b"), expect: { page: 400 } },
  { name: "end-session: POST with a JSON body", request: () => post("/end-session", JSON.stringify({ state: "x" }), JSON_TYPE), expect: { page: 400 } },

  // -- /introspect and /revoke ---------------------------------------------------------------------
  {
    name: "introspect: JSON body",
    request: () => post("/introspect", JSON.stringify({ token: "x" }), JSON_TYPE),
    expect: { oauth: "invalid_request", status: 400 },
  },
  { name: "introspect: no client", request: () => post("/introspect", form({ token: "x" })), expect: { oauth: "invalid_request", status: 400 } },
  {
    name: "introspect: unknown client",
    request: () => post("/introspect", form({ token: "x", client_id: "nobody" })),
    expect: { oauth: "invalid_client", status: 401 },
  },
  { name: "introspect: no token", request: () => post("/introspect", form({ client_id: "dev-client" })), expect: { oauth: "invalid_request", status: 400 } },
  { name: "introspect: GET", request: () => ({ path: "/introspect" }), expect: { status: 405 } },
  { name: "revoke: no token", request: () => post("/revoke", form({ client_id: "dev-client" })), expect: { oauth: "invalid_request", status: 400 } },
  {
    name: "revoke: wrong secret",
    setup: true,
    request: (s) => post("/revoke", form({ client_id: "web-app", client_secret: "x", token: s.accessToken })),
    expect: { oauth: "invalid_client", status: 401 },
  },

  // -- discovery, keys, health, unknown paths ------------------------------------------------------
  { name: "discovery: POST", request: () => post("/.well-known/openid-configuration", ""), expect: { status: 405 } },
  { name: "jwks: POST", request: () => post("/jwks", ""), expect: { status: 405 } },
  { name: "healthz: POST", request: () => post("/healthz", ""), expect: { status: 405 } },
  { name: "unknown path", request: () => ({ path: "/no-such-endpoint" }), expect: { status: 404 } },

  // -- /debug ---------------------------------------------------------------------------------------
  ...[["not JSON", "{"], ["null", "null"], ["a list", "[]"], ["a number", '{"mode":500}'], ["an unknown mode", '{"mode":"fast"}'], ["no mode", "{}"]].map(
    ([what, body]): Row => ({
      name: `debug jwks-mode: ${what}`,
      request: () => post("/debug/jwks-mode", body!, JSON_TYPE),
      expect: { status: 400, error: "invalid_request" },
    }),
  ),
  ...[["not JSON", "x"], ["no field", "{}"], ["negative", '{"advance_seconds":-1}'], ["a string", '{"advance_seconds":"60"}'], [
    "too far",
    '{"advance_seconds":1e12}',
  ]].map(
    ([what, body]): Row => ({
      name: `debug clock: ${what}`,
      request: () => post("/debug/clock", body!, JSON_TYPE),
      expect: { status: 400, error: "invalid_request" },
    }),
  ),
  ...[["not JSON", "{"], ["null", "null"], ["a list", "[]"], ["empty login", '{"login":" "}'], ["claims a list", '{"login":"z","claims":[]}'], [
    "unknown field",
    '{"login":"z","colour":"blue"}',
  ], ["groups a string", '{"login":"z","groups":"a"}']].map(
    ([what, body]): Row => ({
      name: `debug scenarios: ${what}`,
      request: () => post("/debug/scenarios", body!, JSON_TYPE),
      expect: { status: 400, error: "invalid_request" },
    }),
  ),
  { name: "debug: unknown listing", request: () => ({ path: "/debug/nothing" }), expect: { status: 404 } },
];

/** The documented OAuth error answer: the status, a JSON `error` with a string `error_description`, not cached. */
function expectOAuthError(res: JsonResponse, status: number, error: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("cache-control")).toMatch(/no-store/);
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe("string");
}

function b64(value: unknown): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A DPoP-shaped JWT with `alg: none` and no signature. */
function unsignedProof(htu: string): string {
  const header = { typ: "dpop+jwt", alg: "none", jwk: { kty: "EC", crv: "P-256", x: "AA", y: "AA" } };
  return `${b64(header)}.${b64({ jti: crypto.randomUUID(), htm: "POST", htu, iat: Math.floor(Date.now() / 1000) })}.`;
}

async function setUp(): Promise<Setup> {
  const request = await authRequest(config);
  const { callback } = await interactiveLogin(request.url, "alice");
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });
  const second = await authRequest(config);
  const { callback: secondCallback } = await interactiveLogin(second.url, "alice");
  const device = await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "openid" });
  return {
    code: secondCallback.searchParams.get("code")!,
    verifier: second.verifier!,
    userCode: device.body.user_code as string,
    accessToken: tokens.access_token,
  };
}

describe("malformed and missing parameters at every endpoint", () => {
  for (const row of rows) {
    it(row.name, async () => {
      const setup = row.setup ? await setUp() : ({} as Setup);
      const before = await debugCounts(idp.base);
      const r = row.request(setup);
      const res = await fetch(`${idp.base}${r.path}`, { method: r.method ?? "GET", headers: r.headers, body: r.body, redirect: "manual" });
      const text = await res.text();
      const location = res.headers.get("location");
      const e = row.expect;
      if ("oauth" in e) {
        expectOAuthError({ status: res.status, headers: res.headers, body: jsonOrText(text) }, e.status, e.oauth);
      } else if ("page" in e) {
        expect(res.status, text.slice(0, 300)).toBe(e.page);
        expect(res.headers.get("content-type")).toMatch(/^text\/html/);
        if (e.text) expect(text).toContain(e.text);
      } else if ("redirectError" in e) {
        expect(res.status, text.slice(0, 300)).toBe(302);
        const target = new URL(location!);
        expect(target.origin + target.pathname).toBe(e.to ?? REDIRECT_URI);
        expect(target.searchParams.get("error")).toBe(e.redirectError);
        expect(target.searchParams.get("iss")).toBe(idp.issuer);
        expect(target.searchParams.get("state")).toBe("st");
        expect(target.searchParams.get("code")).toBeNull();
      } else {
        expect(res.status, text.slice(0, 300)).toBe(e.status);
        if (e.error) expect(jsonOrText<{ error?: string }>(text).error).toBe(e.error);
      }
      if (!("redirectError" in e)) expect(location, "no redirect for this error").toBeNull();
      expect(res.headers.getSetCookie().some((c) => /^idp_session=[^;]+/.test(c)), "no session cookie is set").toBe(false);
      expect(await debugCounts(idp.base), "stored state is unchanged").toEqual(before);
    });
  }
});

/** Runs `requests` and checks that the stored state (debug counts) is the same afterwards. */
async function leavesStateUnchanged(requests: () => Promise<void>) {
  const before = await debugCounts(idp.base);
  await requests();
  expect(await debugCounts(idp.base), "stored state is unchanged").toEqual(before);
}

describe("specific checks a row cannot express", () => {
  it("token code: a missing or wrong code_verifier is refused and does not spend the code; the right one still redeems it", async () => {
    const request = await authRequest(config);
    const { callback } = await interactiveLogin(request.url, "alice");
    const grant = { grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT_URI, code: callback.searchParams.get("code")! };
    await leavesStateUnchanged(async () => {
      const missing = await postForm(`${idp.base}/token`, grant);
      expect(missing.status).toBe(400);
      expect(["invalid_grant", "invalid_request"]).toContain(missing.body.error);
      expectOAuthError(await postForm(`${idp.base}/token`, { ...grant, code_verifier: client.randomPKCECodeVerifier() }), 400, "invalid_grant");
    });
    const ok = await postForm(`${idp.base}/token`, { ...grant, code_verifier: request.verifier! });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it("userinfo: without a token, 401 with a Bearer or DPoP WWW-Authenticate challenge", async () => {
    await leavesStateUnchanged(async () => {
      const res = await fetch(`${idp.base}/userinfo`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^(Bearer|DPoP)/i);
      await res.arrayBuffer();
    });
  });

  it("userinfo: a garbage token or a malformed Authorization is 401 with WWW-Authenticate (invalid_token for a garbage Bearer token)", async () => {
    await leavesStateUnchanged(async () => {
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

  it("device: a malformed user code is a 400 page that does not echo the code unescaped", async () => {
    await leavesStateUnchanged(async () => {
      const res = await fetch(`${idp.base}/device`, {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ user_code: '<script>alert("xss-1")</script>', action: "approve", login: "alice", password: "" }),
      });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain("invalid or expired code");
      expect(html).not.toContain('<script>alert("xss-1")');
    });
  });
});
