/**
 * Session service: the access token (`--auth-token`, SESSIONS_AUTH_TOKEN; a wrangler var on
 * workerd). With it every request but GET /api/v1/health needs `Authorization: Bearer` or the
 * cookie the banner's link sets; without it the daemon does not listen beyond loopback (Node,
 * Deno), and a Worker answers loopback callers only (workerd).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentRuntime } from "../runtimes/service.ts";
import { cookieFrom, runServiceCli } from "./daemon-helpers.ts";
import { call, expectError, expectOk, type Sessions, startSessions } from "./sessions-helpers.ts";

const TOKEN = "test-token-0123456789abcdef";
const bearer = { authorization: `Bearer ${TOKEN}` };

describe("with an access token", () => {
  let s: Sessions;
  beforeAll(async () => {
    s = await startSessions({ env: { SESSIONS_AUTH_TOKEN: TOKEN } });
  });
  afterAll(() => s?.svc.stop());

  it("every API request without it is 401 UNAUTHORIZED with WWW-Authenticate: Bearer, a wrong one too; with Bearer it works; /health stays open", async () => {
    for (const [method, path] of [["GET", "/templates"], ["GET", "/sessions"], ["POST", "/templates"], ["GET", "/runtime/summary"], ["GET", "/openapi.json"]]) {
      const res = await call(s, method!, path!, method === "POST" ? { name: "nope" } : undefined);
      expectError(res, 401, "UNAUTHORIZED");
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="sessions"');
    }
    const wrong = await call(s, "GET", "/templates", undefined, { authorization: `Bearer ${TOKEN}x` });
    expectError(wrong, 401, "UNAUTHORIZED");
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer realm="sessions", error="invalid_token"');
    expectError(await call(s, "GET", "/templates", undefined, { cookie: `sessions_token=${TOKEN.slice(0, -1)}` }), 401, "UNAUTHORIZED");
    // Nothing was created by the refused POST.
    expect(expectOk(await call(s, "GET", "/templates", undefined, bearer))).toEqual([]);
    // With Authorization: Bearer the API works; GET /api/v1/health stays open for health checks.
    expectOk(await call(s, "POST", "/templates", { name: "with-bearer" }, bearer), 201);
    expect(expectOk(await call(s, "GET", "/templates", undefined, bearer)).map((t: { name: string }) => t.name)).toEqual(["with-bearer"]);
    expect(expectOk(await call(s, "GET", "/health"))).toEqual({ status: "ok" });
  });

  it("the link sets an HttpOnly SameSite=Strict cookie and redirects without the token; the cookie alone then opens the UI and the API", async () => {
    const link = await fetch(`${s.svc.baseUrl}/?token=${TOKEN}`, { redirect: "manual" });
    expect(link.status).toBe(302);
    expect(link.headers.get("location")).toBe("/");
    const setCookie = link.headers.getSetCookie().join("\n");
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = cookieFrom(link, "sessions_token");
    if (s.svc.runtime !== "workerd") {
      // The UI (Node and Deno serve it; on workerd it is the Worker's static assets, which hold no data).
      expect((await fetch(`${s.svc.baseUrl}/`)).status).toBe(401);
      const page = await fetch(`${s.svc.baseUrl}/`, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
    }
    expectOk(await call(s, "POST", "/templates", { name: "with-cookie" }, { cookie }), 201);
    expect(expectOk(await call(s, "GET", "/templates", undefined, { cookie })).map((t: { name: string }) => t.name)).toContain("with-cookie");
    // A link with a wrong token sets nothing.
    const wrong = await fetch(`${s.svc.baseUrl}/?token=wrong-${TOKEN}`, { redirect: "manual" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.getSetCookie()).toEqual([]);
  });
});

describe.skipIf(currentRuntime() === "workerd")("starting (Node, Deno)", () => {
  it("refuses to listen beyond loopback without a token, saying why and how to set one (exit 2)", async () => {
    for (const addr of ["0.0.0.0:0", "[::]:0"]) {
      const run = await runServiceCli("sessions", currentRuntime(), ["--db", ":memory:", "--addr", addr]);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toMatch(/refusing to listen on .* without an access token/);
      expect(run.stderr).toMatch(/--auth-token or SESSIONS_AUTH_TOKEN/);
    }
  });

  it("refuses a token too short to be one (exit 2)", async () => {
    const run = await runServiceCli("sessions", currentRuntime(), ["--db", ":memory:", "--addr", "127.0.0.1:0"], { SESSIONS_AUTH_TOKEN: "short" });
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toMatch(/SESSIONS_AUTH_TOKEN\) must be at least 16 characters/);
  });
});

describe.skipIf(currentRuntime() !== "workerd")("a Worker without a token (workerd)", () => {
  let s: Sessions;
  beforeAll(async () => {
    s = await startSessions();
  });
  afterAll(() => s?.svc.stop());

  it("answers loopback callers only: a deployed Worker (never loopback) needs SESSIONS_AUTH_TOKEN", async () => {
    expectOk(await call(s, "GET", "/templates"));
    const remote = await call(s, "GET", "/templates", undefined, { "cf-connecting-ip": "203.0.113.7" });
    expect(expectError(remote, 401, "UNAUTHORIZED").message).toMatch(/SESSIONS_AUTH_TOKEN/);
    expectOk(await call(s, "GET", "/health", undefined, { "cf-connecting-ip": "203.0.113.7" }));
  });
});
