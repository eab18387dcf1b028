/**
 * `.rateLimit` over HTTP, on the runtime of the vitest project (node, deno or workerd), serving
 * test/contract/fixtures/routes-rate-limit/app.js: 429 with Retry-After and the RateLimit fields,
 * ip limits before authentication and actor/token limits after it, forwarding headers a client
 * writes ignored, concurrent bursts counted exactly (on Node and Deno across two hosts on one
 * libSQL file; on workerd in the store's Durable Object), audit `rate_limited`, and the limit on
 * the sign-in routes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedIdp, startIdp } from "../../apps/idp/testing.ts";
import { currentRuntime, type RunningService, startService } from "../runtimes/service.ts";
import { AUDIENCE, CLIENTS, clientToken } from "./routes-helpers.ts";
import { expectRefusedWhileHeld, heldUpload } from "./held-upload.ts";

const runtime = currentRuntime();
const dir = mkdtempSync(join(tmpdir(), "routes-rate-"));
let idp: StartedIdp;
let host: RunningService;
/** A second host on the same database (Node and Deno; on workerd the store object is one). */
let twin: RunningService | undefined;

function hostEnv(): Record<string, string> {
  const env: Record<string, string> = {
    ROUTES_SCRIPT: "test/contract/fixtures/routes-rate-limit/app.js",
    ROUTES_ISSUER: idp.issuer,
    ROUTES_AUDIENCE: AUDIENCE,
    ROUTES_SESSION_SECRET: "rate-secret",
    ROUTES_AUDIT: "db",
    ROUTES_SIGN_IN_RATE_LIMIT: "3/86400",
  };
  // Node and Deno: one libSQL file for both hosts. workerd: the store's Durable Object.
  if (runtime !== "workerd") env.ROUTES_DB = `file:${join(dir, "routes.db")}`;
  return env;
}

beforeAll(async () => {
  idp = await startIdp({ clients: CLIENTS, accessTokenFormat: "jwt", accessTokenAudience: AUDIENCE });
  host = await startService("routes", { env: hostEnv() });
  if (runtime !== "workerd") twin = await startService("routes", { env: hostEnv() });
});

afterAll(async () => {
  await twin?.stop();
  await host?.stop();
  await idp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, init: RequestInit = {}, on: RunningService = host) => fetch(on.baseUrl + path, { redirect: "manual", ...init });

async function statuses(n: number, send: () => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await send();
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe("rate limits", () => {
  it("answers 429 past the limit with Retry-After, RateLimit, RateLimit-Policy and the error envelope", async () => {
    const first = await get("/limited");
    expect(first.status).toBe(200);
    expect(await first.text()).toBe("within");
    expect(first.headers.get("ratelimit-policy")).toBe('"ip-86400s";q=3;w=86400');
    expect(first.headers.get("ratelimit")).toMatch(/^"ip-86400s";r=2;t=\d+$/);
    expect(await statuses(2, () => get("/limited"))).toEqual([200, 200]);
    const refused = await get("/limited");
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86400);
    expect(refused.headers.get("ratelimit")).toBe(`"ip-86400s";r=0;t=${retryAfter}`);
    expect(refused.headers.get("ratelimit-policy")).toBe('"ip-86400s";q=3;w=86400');
    const body = await refused.json();
    expect(body.error.code).toBe("RATE_LIMITED");
    expect(body.error.message).toMatch(/^too many requests: at most 3 every 86400 s; try again in \d+ s$/);
    // A browser gets the host's page, with the same status and Retry-After.
    const page = await get("/limited", { headers: { accept: "text/html" } });
    expect(page.status).toBe(429);
    expect(page.headers.get("retry-after")).not.toBeNull();
    expect(await page.text()).toContain("Too many requests");
  });

  it("ignores forwarding headers a client writes: the key is the address the host trusts", async () => {
    expect((await get("/spoofed")).status).toBe(200);
    const spoofs: Record<string, string>[] = [{ "x-forwarded-for": "192.0.2.1" }, { "x-real-ip": "192.0.2.3" }, { forwarded: "for=192.0.2.4" }];
    // On Node and Deno nothing but the socket's peer counts (no --trusted-proxy); on workerd
    // CF-Connecting-IP is the platform's word (the default `cloudflare`), so it is not a spoof there.
    if (runtime !== "workerd") spoofs.push({ "cf-connecting-ip": "192.0.2.2" });
    for (const headers of spoofs) expect((await get("/spoofed", { headers })).status, JSON.stringify(headers)).toBe(429);
  });

  it("counts by ip before authentication: past the limit even a valid token gets 429, and an audit record says rate_limited", async () => {
    const token = await clientToken(idp, "reader", "rl:use");
    const post = (headers: Record<string, string> = {}) =>
      get("/before-auth", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });
    expect(await statuses(2, () => post())).toEqual([401, 401]);
    const refused = await post({ authorization: `Bearer ${token}` });
    expect(refused.status).toBe(429);
    expect((await refused.json()).error.code).toBe("RATE_LIMITED");
    const denied = (await (await get("/audit")).json()) as { event: string; reason: string; statusCode: number }[];
    expect(denied.filter((e) => e.event === "rl.before").map((e) => [e.reason, e.statusCode])).toEqual([
      ["rate_limited", 429],
      ["no_credentials", 401],
      ["no_credentials", 401],
    ]);
  });

  // Not on workerd, for the reason routes-held-body.test.ts gives (the wrangler dev proxy).
  it.skipIf(currentRuntime() === "workerd")("answers a refusal before the body while the client still holds a declared 10 GB body open", async () => {
    // /before-auth is spent for this address (the test above): the 429 comes without the body.
    expectRefusedWhileHeld(await heldUpload(host.port, "/before-auth", 10 * 1024 ** 3), 429);
  });

  it("counts actor and token limits after authentication, by the actor and by the token", async () => {
    const [a1, a2, other] = [
      await clientToken(idp, "reader", "rl:use"),
      await clientToken(idp, "reader", "rl:use"),
      await clientToken(idp, "outsider", "rl:use"),
    ];
    expect(a1).not.toBe(a2);
    // No credentials: 401, and nobody's allowance is used up.
    expect(await statuses(3, () => get("/per-actor"))).toEqual([401, 401, 401]);
    expect(await statuses(3, () => get("/per-actor", { headers: { authorization: `Bearer ${a1}` } }))).toEqual([200, 200, 429]);
    // Another token of the same client is the same actor; another client is not.
    expect((await get("/per-actor", { headers: { authorization: `Bearer ${a2}` } })).status).toBe(429);
    expect((await get("/per-actor", { headers: { authorization: `Bearer ${other}` } })).status).toBe(200);
    // By token: each token has its own allowance.
    expect(await statuses(2, () => get("/per-token", { headers: { authorization: `Bearer ${a1}` } }))).toEqual([200, 429]);
    // The same token respelled in its signature's ignored last bits (they verify): still a1.
    const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = B64URL.indexOf(a1.at(-1)!);
    for (const bits of [1, 2, 3]) {
      const respelled = a1.slice(0, -1) + B64URL[(last & ~3) | ((last + bits) & 3)];
      expect((await get("/per-token", { headers: { authorization: `Bearer ${respelled}` } })).status, respelled.slice(-4)).toBe(429);
    }
    expect((await get("/per-token", { headers: { authorization: `Bearer ${a2}` } })).status).toBe(200);
    const denied = (await (await get("/audit")).json()) as { event: string; reason: string; actor?: { id: string } }[];
    expect(denied.filter((e) => e.event === "rl.actor" && e.reason === "rate_limited").map((e) => e.actor?.id)).toEqual(["reader", "reader"]);
  });

  it("counts a concurrent burst exactly, across two hosts on one database where there are two", async () => {
    const targets = twin ? [host, twin] : [host];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => get("/burst", {}, targets[i % targets.length]).then(async (r) => (await r.arrayBuffer(), r.status))),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(25);
    expect(answers.filter((s) => s === 429)).toHaveLength(35);
    for (const on of targets) expect((await get("/burst", {}, on)).status).toBe(429);
  });

  it("limits the sign-in routes per address, all of them on one counter (ROUTES_SIGN_IN_RATE_LIMIT)", async () => {
    const first = await get("/auth/callback?state=x&code=y");
    expect(first.status).toBe(400); // no sign-in under way: refused, and counted
    expect(first.headers.get("ratelimit-policy")).toBe('"sign-in";q=3;w=86400');
    expect((await get("/auth/logout")).status).toBe(302); // sign-out: never limited, not counted
    expect((await get("/auth/callback?state=x&code=y")).status).toBe(400);
    expect((await get("/auth/callback?state=x&code=y")).status).toBe(400);
    const refused = await get("/auth/login");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit")).toMatch(/^"sign-in";r=0;t=\d+$/);
    if (twin) expect((await get("/auth/login", {}, twin)).status).toBe(429);
  });
});
