/** Foundation contract: health endpoints and the shared middleware, on every runtime. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "../runtimes/service.ts";

describe("identity provider health", () => {
  let idp: RunningService;
  beforeAll(async () => {
    idp = await startService("idp");
  });
  afterAll(() => idp?.stop());

  it("GET /healthz answers ok with a request id", async () => {
    const res = await fetch(`${idp.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("echoes a well-formed X-Request-Id and replaces a malformed one, once, on every kind of response", async () => {
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const kinds = [
      `${idp.baseUrl}/jwks`,
      `${idp.baseUrl}/no-such-path`,
      // A redirect with an error to the client's registered redirect URI.
      `${idp.baseUrl}/authorize?client_id=dev-client&redirect_uri=${encodeURIComponent("http://localhost:3000/callback")}&response_type=token`,
    ];
    for (const url of kinds) {
      const echoed = await fetch(url, { headers: { "X-Request-Id": "trace-12345678" }, redirect: "manual" });
      // A repeated header would read as "a, b".
      expect(echoed.headers.get("x-request-id"), url).toBe("trace-12345678");
      const replaced = await fetch(url, { headers: { "X-Request-Id": "no spaces <allowed>" }, redirect: "manual" });
      expect(replaced.headers.get("x-request-id"), url).toMatch(UUID);
      const fresh = await fetch(url, { redirect: "manual" });
      expect(fresh.headers.get("x-request-id"), url).toMatch(UUID);
      expect([200, 302, 404], url).toContain(fresh.status);
    }
  });
});

describe("session service health and shared middleware", () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService("sessions", { args: ["--db", ":memory:"] });
  });
  afterAll(() => svc?.stop());

  it("GET /api/v1/health answers {status: ok}", async () => {
    const res = await fetch(`${svc.baseUrl}/api/v1/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("every response carries a fresh X-Request-Id", async () => {
    const a = (await fetch(`${svc.baseUrl}/api/v1/health`)).headers.get("x-request-id");
    const b = (await fetch(`${svc.baseUrl}/api/v1/health`)).headers.get("x-request-id");
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b).not.toBe(a);
  });

  it("echoes a well-formed incoming X-Request-Id and replaces a malformed one", async () => {
    const ok = await fetch(`${svc.baseUrl}/api/v1/health`, { headers: { "X-Request-Id": "trace-12345678" } });
    expect(ok.headers.get("x-request-id")).toBe("trace-12345678");
    const bad = await fetch(`${svc.baseUrl}/api/v1/health`, { headers: { "X-Request-Id": "no spaces <allowed>" } });
    expect(bad.headers.get("x-request-id")).not.toBe("no spaces <allowed>");
  });

  it("an unknown route is a 404 in the error envelope, with a request id", async () => {
    const res = await fetch(`${svc.baseUrl}/api/v1/nope`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("NOT_FOUND");
    expect(typeof body.error.message).toBe("string");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});
