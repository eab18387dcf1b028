/**
 * Identity provider: the debug interface's token (`--debug-token`, IDP_DEBUG_TOKEN; a wrangler
 * var on workerd). With it, a loopback caller must also present it: `Authorization: Bearer`, or
 * the cookie `/debug/ui?token=` sets. Without it the provider does not listen beyond loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentRuntime, type RunningService, startService } from "../runtimes/service.ts";
import { cookieFrom, runServiceCli } from "./daemon-helpers.ts";

const TOKEN = "idp-debug-token-0123456789";

describe("with a debug token", () => {
  let idp: RunningService;
  beforeAll(async () => {
    idp = await startService("idp", { env: { IDP_DEBUG_TOKEN: TOKEN } });
  });
  afterAll(() => idp?.stop());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${idp.baseUrl}${path}`, { headers, redirect: "manual" });

  it("the debug interface without it is 401 with WWW-Authenticate: Bearer, with Bearer 200; the rest of the provider is open", async () => {
    for (const path of ["/debug", "/debug/ui", "/debug/tokens", "/debug/client"]) {
      const res = await get(path);
      expect(res.status, path).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="idp-debug"');
      expect((await res.json()).error).toBe("unauthorized");
    }
    const wrong = await get("/debug", { authorization: `Bearer ${TOKEN}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect((await get("/.well-known/openid-configuration")).status).toBe(200);
    // A change the debug interface would make is refused too.
    expect((await fetch(`${idp.baseUrl}/debug/reset`, { method: "POST" })).status).toBe(401);
    // With Authorization: Bearer it answers; a caller that is not local still gets 403 (workerd:
    // CF-Connecting-IP; on Node and Deno the socket decides, and the tests' socket is local).
    const res = await get("/debug", { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toHaveProperty("counts");
    if (currentRuntime() === "workerd") {
      expect((await get("/debug", { authorization: `Bearer ${TOKEN}`, "cf-connecting-ip": "203.0.113.7" })).status).toBe(403);
    }
  });

  it("the link sets an HttpOnly SameSite=Strict cookie and redirects without the token; the cookie alone then opens the page and the JSON", async () => {
    const link = await get(`/debug/ui?token=${TOKEN}`);
    expect(link.status).toBe(302);
    expect(link.headers.get("location")).toBe("/debug/ui");
    expect(link.headers.getSetCookie().join("\n")).toMatch(/HttpOnly.*SameSite=Strict|SameSite=Strict.*HttpOnly/);
    const cookie = cookieFrom(link, "idp_debug_token");
    const page = await get("/debug/ui", { cookie });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect((await get("/debug", { cookie })).status).toBe(200);
  });
});

describe.skipIf(currentRuntime() === "workerd")("starting (Node, Deno)", () => {
  it("refuses to listen beyond loopback without a debug token, saying why and how to set one (exit 2)", async () => {
    const run = await runServiceCli("idp", currentRuntime(), ["--addr", "0.0.0.0:0"]);
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toMatch(/refusing to listen on 0\.0\.0\.0:0 .*without a debug token/);
    expect(run.stderr).toMatch(/--debug-token or IDP_DEBUG_TOKEN/);
  });
});
