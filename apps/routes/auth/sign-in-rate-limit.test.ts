/** The host-wide limit on the sign-in routes: on by default, one counter for all of /auth/*, configurable. */
import { describe, expect, it } from "vitest";
import { createRouteHost } from "../host/host.ts";
import { hostSecurity, parseSignInRateLimit } from "./security.ts";

describe("parseSignInRateLimit", () => {
  it("defaults to 60 a minute, takes LIMIT/SECONDS or off, and says what is wrong otherwise", () => {
    expect(parseSignInRateLimit(undefined)).toEqual({ limit: 60, windowSeconds: 60 });
    expect(parseSignInRateLimit("")).toEqual({ limit: 60, windowSeconds: 60 });
    expect(parseSignInRateLimit("10/300")).toEqual({ limit: 10, windowSeconds: 300 });
    expect(parseSignInRateLimit("10/300s")).toEqual({ limit: 10, windowSeconds: 300 });
    expect(parseSignInRateLimit("off")).toBeUndefined();
    for (const bad of ["0/60", "10", "10/0", "ten/60", "10/90000", "-1/60"]) {
      expect(() => parseSignInRateLimit(bad)).toThrow(
        `sign-in rate limit: expected LIMIT/SECONDS (such as 60/60, at most 1000000000/86400) or off, got "${bad}"`,
      );
    }
  });
});

describe("the sign-in routes' limit", () => {
  function hostWith(setting: string | undefined) {
    const security = hostSecurity({ issuer: "http://127.0.0.1:9/never-asked", signInRateLimit: parseSignInRateLimit(setting) });
    const host = createRouteHost({ session: security.session, auth: security.auth });
    security.register(host);
    const get = (path: string, ip = "192.0.2.1") => host.fetch(new Request(`http://h.test${path}`), { clientAddress: ip, requestId: "r" });
    return get;
  }

  it("is on by default: 60 requests a minute from one address, sign-in and callback on one counter, sign-out never limited", async () => {
    const get = hostWith(undefined);
    const first = await get("/auth/callback?state=x&code=y");
    expect(first.status).toBe(400);
    expect(first.headers.get("ratelimit-policy")).toBe('"sign-in";q=60;w=60');
    for (let i = 1; i < 59; i++) await get("/auth/callback?state=x&code=y");
    expect((await get("/auth/login")).status).not.toBe(429); // the 60th
    const refused = await get("/auth/callback?state=x&code=y");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect((await get("/auth/login")).status).toBe(429);
    const out = await get("/auth/logout");
    expect(out.status).toBe(302);
    expect(out.headers.get("ratelimit")).toBeNull();
    // Another address is another client.
    expect((await get("/auth/callback?state=x&code=y", "192.0.2.2")).status).toBe(400);
  });

  it("can be set, and switched off", async () => {
    const strict = hostWith("2/3600");
    const cb = "/auth/callback?state=x&code=y";
    expect([(await strict(cb)).status, (await strict(cb)).status, (await strict(cb)).status]).toEqual([400, 400, 429]);
    const open = hostWith("off");
    for (let i = 0; i < 70; i++) expect((await open(cb)).status).toBe(400);
    expect((await open(cb)).headers.get("ratelimit")).toBeNull();
  });
});
