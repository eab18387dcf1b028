import { describe, expect, it } from "vitest";
import { createLogger } from "#lib/log";
import { createIdp } from "../app.ts";

const ORIGIN = "http://localhost:4000";
const idp = () =>
  createIdp({ issuer: "http://127.0.0.1:5556/realms/dev", redirectUris: [`${ORIGIN}/callback`], logger: createLogger({ level: "silent" }), accessLog: false });

describe("CORS in the app", () => {
  it("discovery and /jwks still answer synchronously (the key fetch fast path), with their CORS headers", async () => {
    const { app } = await idp();
    for (const path of ["/jwks", "/.well-known/openid-configuration", "/realms/dev/jwks"]) {
      for (const headers of [{ origin: ORIGIN }, {}] as Record<string, string>[]) {
        const res = app.fetch(new Request(`http://127.0.0.1:5556${path}`, { headers }));
        expect(res, path).toBeInstanceOf(Response);
        expect((res as Response).headers.get("access-control-allow-origin"), path).toBe(headers.origin ?? null);
        expect((res as Response).headers.get("vary"), path).toBe("Origin");
      }
    }
  });

  it("preflights under the issuer's path and an issuer by path as at the root; never on the pages", async () => {
    const { app } = await idp();
    const preflight = (path: string) =>
      app.fetch(new Request(`http://127.0.0.1:5556${path}`, { method: "OPTIONS", headers: { origin: ORIGIN, "access-control-request-method": "POST" } }));
    for (const path of ["/token", "/realms/dev/token", "/realms/dev/.well-known/openid-configuration", "/tenant-a/userinfo"]) {
      const res = await preflight(path);
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin"), path).toBe(ORIGIN);
    }
    for (const path of ["/authorize", "/realms/dev/end-session", "/device", "/debug"]) {
      const res = await preflight(path);
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
    }
  });
});
