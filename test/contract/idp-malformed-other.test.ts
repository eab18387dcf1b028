/**
 * Identity provider: /userinfo, /device_authorization and /device, /end-session, /introspect and
 * /revoke, discovery, keys, health, unknown paths and /debug against malformed, missing, repeated
 * and wrong parameters, as one table; the same rows and checks as idp-malformed.test.ts (/token and
 * /authorize): the documented answer (an OAuth JSON error, a 400/401 HTML page, or a status with a
 * debug error), never a 5xx, no `Location`, no session cookie, and the stored state unchanged.
 *
 * After the table, a few specific checks whose expectation a row cannot state: the
 * `WWW-Authenticate` challenge of /userinfo, and a malformed user code not echoed unescaped.
 */
import { describe, expect, it } from "vitest";
import { basicAuth } from "./idp-helpers.ts";
import { b64, checkRow, FORM, form, JSON_TYPE, leavesStateUnchanged, post, query, type Row, useMalformedIdp } from "./idp-malformed-helpers.ts";

const ctx = useMalformedIdp();

const rows: Row[] = [
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

describe("malformed and missing parameters at every endpoint", () => {
  for (const row of rows) it(row.name, () => checkRow(ctx, row));
});

describe("specific checks a row cannot express", () => {
  it("userinfo: without a token, 401 with a Bearer or DPoP WWW-Authenticate challenge", async () => {
    await leavesStateUnchanged(ctx.idp.base, async () => {
      const res = await fetch(`${ctx.idp.base}/userinfo`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^(Bearer|DPoP)/i);
      await res.arrayBuffer();
    });
  });

  it("userinfo: a garbage token or a malformed Authorization is 401 with WWW-Authenticate (invalid_token for a garbage Bearer token)", async () => {
    await leavesStateUnchanged(ctx.idp.base, async () => {
      for (const authorization of ["Bearer garbage", "Bearer ", "Basic Zm9vOmJhcg==", "garbage"]) {
        const res = await fetch(`${ctx.idp.base}/userinfo`, { headers: { authorization } });
        expect(res.status, authorization).toBe(401);
        expect(res.headers.get("www-authenticate"), authorization).toBeTruthy();
        await res.arrayBuffer();
      }
      const res = await fetch(`${ctx.idp.base}/userinfo`, { headers: { authorization: "Bearer garbage" } });
      expect(res.headers.get("www-authenticate")).toMatch(/invalid_token/);
      await res.arrayBuffer();
    });
  });

  it("device: a malformed user code is a 400 page that does not echo the code unescaped", async () => {
    await leavesStateUnchanged(ctx.idp.base, async () => {
      const res = await fetch(`${ctx.idp.base}/device`, {
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
