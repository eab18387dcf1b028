import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { registerAccess } from "./access.ts";

function app(access: Parameters<typeof registerAccess>[1]): Hono {
  const a = new Hono();
  registerAccess(a, access);
  a.get("/api/v1/health", (c) => c.json({ status: "ok" }));
  a.get("/api/v1/templates", (c) => c.json([]));
  a.get("/", (c) => c.html("<p>ui</p>"));
  return a;
}

const TOKEN = "a-token-of-sixteen-or-more";
const remote = { clientAddress: "203.0.113.7" };
const local = { clientAddress: "127.0.0.1" };

describe("registerAccess", () => {
  it("no token, no loopback rule: everyone (the command line keeps such a daemon on loopback)", async () => {
    expect((await app({}).request("/api/v1/templates", {}, remote)).status).toBe(200);
  });

  it("with a token: the API and the UI need it, health does not; the envelope says UNAUTHORIZED", async () => {
    const a = app({ token: TOKEN });
    for (const path of ["/api/v1/templates", "/"]) {
      const res = await a.request(path, {}, local);
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe("UNAUTHORIZED");
    }
    expect((await a.request("/api/v1/health", {}, remote)).status).toBe(200);
    expect((await a.request("/api/v1/templates", { headers: { authorization: `Bearer ${TOKEN}` } }, remote)).status).toBe(200);
  });

  it("loopbackOnly without a token (workerd): loopback callers only, health for all", async () => {
    const a = app({ loopbackOnly: true });
    expect((await a.request("/api/v1/templates", {}, local)).status).toBe(200);
    const res = await a.request("/api/v1/templates", {}, remote);
    expect(res.status).toBe(401);
    expect((await res.json()).error.message).toMatch(/SESSIONS_AUTH_TOKEN/);
    expect((await a.request("/api/v1/templates")).status).toBe(401); // no address known: not loopback
    expect((await a.request("/api/v1/health", {}, remote)).status).toBe(200);
  });

  it("a token wins over the loopback rule: a remote caller with it gets in", async () => {
    const a = app({ token: TOKEN, loopbackOnly: true });
    expect((await a.request("/api/v1/templates", { headers: { authorization: `Bearer ${TOKEN}` } }, remote)).status).toBe(200);
  });
});
