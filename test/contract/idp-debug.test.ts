/** Identity provider: the loopback-only debug interface (counts, listings, key modes, clock, reset). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  advanceClock,
  ALICE_SUB,
  authRequest,
  client,
  codeFlow,
  debugCounts,
  debugJson,
  getAuthorize,
  getJson,
  type Idp,
  interactiveLogin,
  postForm,
  redeem,
  rejection,
  resetIdp,
  RFC3339,
  rp,
  startIdp,
} from "./idp-helpers.ts";
import { currentRuntime } from "../runtimes/service.ts";
import { createLocalJWKSet, jwtVerify } from "jose";

let idp: Idp;
let config: client.Configuration;

beforeAll(async () => {
  // The `slow` key mode's delay, shortened for tests (default 10 s).
  idp = await startIdp({ IDP_JWKS_SLOW_MS: String(JWKS_SLOW_MS), IDP_SIGNING_KEYS: "" }); // generated: it rotates them
  config = await rp(idp.issuer);
});
afterAll(() => idp?.svc.stop());
beforeEach(async () => {
  await resetIdp(idp.base);
});

const JWKS_SLOW_MS = 200;
const ZERO = { sessions: 0, codes: 0, tokens: 0, refresh_tokens: 0, device_grants: 0, replay_entries: 0 };

describe("GET /debug", () => {
  it("reports counts and the key endpoint mode, and counts follow the flows", async () => {
    const root = await getJson(`${idp.base}/debug`);
    expect(root.status).toBe(200);
    expect(root.headers.get("content-type")).toMatch(/^application\/json/);
    expect(root.body).toEqual({ counts: ZERO, jwks_mode: "normal" });

    const request = await authRequest(config, { scope: "openid offline_access" });
    const { callback, cookie } = await interactiveLogin(request.url, "alice");
    expect(cookie).toBeDefined();
    expect(await debugCounts(idp.base)).toMatchObject({ sessions: 1, codes: 1, tokens: 0, refresh_tokens: 0 });

    await redeem(config, callback, request);
    expect(await debugCounts(idp.base)).toMatchObject({ sessions: 1, codes: 0, tokens: 1, refresh_tokens: 1 });

    await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "openid" });
    expect((await debugCounts(idp.base)).device_grants).toBe(1);
  });
});

describe("listings show secrets only as 8-character prefixes", () => {
  it("sessions, codes, tokens and device grants", async () => {
    const request = await authRequest(config, { scope: "openid offline_access" });
    const { callback, cookie } = await interactiveLogin(request.url, "alice");
    const code = callback.searchParams.get("code")!;
    const sessionId = decodeURIComponent(cookie!.slice("idp_session=".length));

    const codesRes = await fetch(`${idp.base}/debug/codes`);
    const codesText = await codesRes.text();
    const codes = JSON.parse(codesText) as Array<Record<string, string>>;
    expect(codes).toHaveLength(1);
    expect(codes[0]).toMatchObject({ client_id: "dev-client", sub: ALICE_SUB });
    expect(codes[0]!.code_prefix).toHaveLength(8);
    expect(code.startsWith(codes[0]!.code_prefix!)).toBe(true);
    expect(codes[0]!.expires_at).toMatch(RFC3339);
    expect(codesText).not.toContain(code);

    const sessionsText = await (await fetch(`${idp.base}/debug/sessions`)).text();
    const sessions = JSON.parse(sessionsText) as Array<Record<string, string>>;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ login: "alice", sub: ALICE_SUB });
    expect(sessions[0]!.id_prefix).toHaveLength(8);
    expect(sessions[0]!.auth_time).toMatch(RFC3339);
    expect(sessions[0]!.expires_at).toMatch(RFC3339);
    // Session lifetime is 24 h.
    const lifetime = Date.parse(sessions[0]!.expires_at!) - Date.parse(sessions[0]!.auth_time!);
    expect(Math.abs(lifetime - 24 * 3600 * 1000)).toBeLessThan(5000);
    if (sessionId.length > 8) expect(sessionsText).not.toContain(sessionId);

    const tokens = await redeem(config, callback, request);
    const tokensText = await (await fetch(`${idp.base}/debug/tokens`)).text();
    const listed = JSON.parse(tokensText) as Array<Record<string, string>>;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ client_id: "dev-client", sub: ALICE_SUB, token_type: "Bearer" });
    expect(listed[0]!.scope).toContain("offline_access");
    expect(listed[0]!.token_prefix).toHaveLength(8);
    expect(tokens.access_token.startsWith(listed[0]!.token_prefix!)).toBe(true);
    expect(listed[0]!.expires_at).toMatch(RFC3339);
    expect(listed[0]).not.toHaveProperty("jkt");
    expect(tokensText).not.toContain(tokens.access_token);
    expect(tokensText).not.toContain(tokens.refresh_token!);

    const started = await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "openid" });
    const deviceCode = started.body.device_code as string;
    const grantsText = await (await fetch(`${idp.base}/debug/device-grants`)).text();
    const grants = JSON.parse(grantsText) as Array<Record<string, string>>;
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({ user_code: started.body.user_code, client_id: "dev-client", status: "pending" });
    expect(grants[0]!.device_code_prefix).toHaveLength(8);
    expect(deviceCode.startsWith(grants[0]!.device_code_prefix!)).toBe(true);
    expect(grants[0]!.expires_at).toMatch(RFC3339);
    expect(grantsText).not.toContain(deviceCode);
  });

  it("empty listings are []", async () => {
    for (const path of ["/sessions", "/codes", "/tokens", "/device-grants"]) {
      expect(await debugJson(idp.base, path), path).toEqual([]);
    }
  });
});

describe("key endpoint modes", () => {
  it("500 makes /jwks fail, empty serves no keys, reset restores normal", async () => {
    expect(await debugJson(idp.base, "/jwks-mode")).toEqual({ mode: "normal" });

    expect(await debugJson(idp.base, "/jwks-mode", { mode: "500" })).toEqual({ mode: "500" });
    expect(await debugJson(idp.base, "/jwks-mode")).toEqual({ mode: "500" });
    const failing = await fetch(`${idp.base}/jwks`);
    expect(failing.status).toBe(500);
    await failing.arrayBuffer();
    expect((await debugJson(idp.base, "")).jwks_mode).toBe("500");

    expect(await debugJson(idp.base, "/jwks-mode", { mode: "empty" })).toEqual({ mode: "empty" });
    const empty = await getJson(`${idp.base}/jwks`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ keys: [] });

    expect(await debugJson(idp.base, "/jwks-mode", { mode: "slow" })).toEqual({ mode: "slow" });
    const started = performance.now();
    const slow = await getJson<{ keys: unknown[] }>(`${idp.base}/jwks`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(JWKS_SLOW_MS - 5);
    expect(slow.status).toBe(200);
    expect(slow.body.keys).toHaveLength(9);

    expect(await resetIdp(idp.base)).toEqual({ reset: true });
    expect(await debugJson(idp.base, "/jwks-mode")).toEqual({ mode: "normal" });
    const normal = await getJson<{ keys: unknown[] }>(`${idp.base}/jwks`);
    expect(normal.status).toBe(200);
    expect(normal.body.keys).toHaveLength(9);
  });

  it("an invalid mode is 400 invalid_request and leaves the mode alone", async () => {
    await debugJson(idp.base, "/jwks-mode", { mode: "empty" });
    for (const body of [{ mode: "bogus" }, { mode: 500 }, {}, "not json"]) {
      const res = await fetch(`${idp.base}/debug/jwks-mode`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_request" });
    }
    expect(await debugJson(idp.base, "/jwks-mode")).toEqual({ mode: "empty" });
  });
});

describe("POST /debug/reset", () => {
  it("clears sessions, codes, tokens, refresh tokens and device grants", async () => {
    const request = await authRequest(config, { scope: "openid offline_access" });
    const { callback, cookie } = await interactiveLogin(request.url, "alice");
    const tokens = await redeem(config, callback, request);
    await interactiveLogin((await authRequest(config)).url, "bob");
    await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "openid" });
    const before = await debugCounts(idp.base);
    expect(before.sessions).toBe(2);
    expect(before.codes).toBe(1);
    expect(before.device_grants).toBe(1);

    expect(await resetIdp(idp.base)).toEqual({ reset: true });
    expect(await debugCounts(idp.base)).toEqual(ZERO);
    // What was issued before no longer works.
    expect((await fetch(`${idp.base}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    expect((await rejection(client.refreshTokenGrant(config, tokens.refresh_token!))).error).toBe("invalid_grant");
    const silent = await getAuthorize((await authRequest(config, { params: { prompt: "none" } })).url, cookie);
    expect(new URL(silent.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });
});

describe("POST /debug/clock", () => {
  it("moves the clock forward, reports the offset, and reset sets it back to 0", async () => {
    const moved = await advanceClock(idp.base, 90);
    expect(moved.offset_seconds).toBe(90);
    expect(moved.now).toMatch(RFC3339);
    expect(Math.abs(Date.parse(moved.now) - (Date.now() + 90_000))).toBeLessThan(5000);
    expect((await advanceClock(idp.base, 10)).offset_seconds).toBe(100);
    await resetIdp(idp.base);
    const after = await advanceClock(idp.base, 0);
    expect(after.offset_seconds).toBe(0);
    expect(Math.abs(Date.parse(after.now) - Date.now())).toBeLessThan(5000);
  });

  it("codes expire after 5 minutes", async () => {
    const request = await authRequest(config);
    const { callback } = await interactiveLogin(request.url, "alice");
    await advanceClock(idp.base, 301);
    expect((await rejection(redeem(config, callback, request))).error).toBe("invalid_grant");
  });

  it("access tokens expire after an hour", async () => {
    const { tokens } = await codeFlow(config);
    await advanceClock(idp.base, 3599);
    expect((await fetch(`${idp.base}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    await advanceClock(idp.base, 2);
    expect((await fetch(`${idp.base}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it("sessions expire after 24 hours", async () => {
    const { cookie } = await codeFlow(config);
    await advanceClock(idp.base, 24 * 3600 + 1);
    const silent = await getAuthorize((await authRequest(config, { params: { prompt: "none" } })).url, cookie);
    expect(silent.status).toBe(302);
    expect(new URL(silent.headers.get("location")!).searchParams.get("error")).toBe("login_required");
    expect(await debugJson(idp.base, "/sessions")).toEqual([]);
  });

  it("a non-numeric or negative advance is 400", async () => {
    for (const body of [{ advance_seconds: "ten" }, { advance_seconds: -5 }, {}]) {
      const res = await fetch(`${idp.base}/debug/clock`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      await res.arrayBuffer();
    }
    expect((await advanceClock(idp.base, 0)).offset_seconds).toBe(0);
  });
});

describe("loopback rule", () => {
  // On workerd the caller's address is the platform's CF-Connecting-IP; on Node and Deno it is the
  // socket's, which here is always loopback (so a forged header must not change the answer).
  const runtime = currentRuntime();
  it(
    runtime === "workerd"
      ? "a non-loopback caller (CF-Connecting-IP) gets 403 {error: forbidden}"
      : "the socket address decides: a CF-Connecting-IP header does not change a loopback caller's answer",
    async () => {
      const res = await fetch(`${idp.base}/debug`, { headers: { "cf-connecting-ip": "203.0.113.9" } });
      if (runtime === "workerd") {
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ error: "forbidden" });
        const reset = await fetch(`${idp.base}/debug/reset`, { method: "POST", headers: { "cf-connecting-ip": "203.0.113.9" } });
        expect(reset.status).toBe(403);
        await reset.arrayBuffer();
        // Without the header, wrangler/miniflare sets it from the socket (127.0.0.1 here); every
        // loopback form the platform might report is served.
        for (const address of [undefined, "127.0.0.1", "127.5.6.7", "::1", "::ffff:127.0.0.1"]) {
          const ok = await fetch(`${idp.base}/debug`, { headers: address ? { "cf-connecting-ip": address } : {} });
          expect(ok.status, address).toBe(200);
          await ok.arrayBuffer();
        }
      } else {
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    },
  );
});

// Last in the file: the keys stay rotated for the rest of this provider's life.
describe("POST /debug/keys/rotate", () => {
  type Jwks = { keys: { kid: string; n: string }[] };
  const published = async () => Object.fromEntries((await getJson<Jwks>(`${idp.base}/jwks`)).body.keys.map((k) => [k.kid, k.n]));

  it("a new dev-key-1 signs from now on, the previous one becomes rotated-key-2, and every later /jwks shows it", async () => {
    const before = await published();
    const old = (await codeFlow(config)).tokens.id_token!;
    const res = await fetch(`${idp.base}/debug/keys/rotate`, { method: "POST" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { rotated: boolean; jwks: Jwks };
    expect(body.rotated).toBe(true);
    const after = await published();
    expect(Object.fromEntries(body.jwks.keys.map((k) => [k.kid, k.n]))).toEqual(after);
    expect(after["dev-key-1"]).not.toBe(before["dev-key-1"]);
    expect(after["rotated-key-2"]).toBe(before["dev-key-1"]);
    expect(after["bad-sig-key"]).toBe(before["bad-sig-key"]);
    // The same answer several times over (with two instances, from both of them).
    for (let i = 0; i < 4; i++) expect(await published()).toEqual(after);

    const jwks = createLocalJWKSet((await getJson<{ keys: [] }>(`${idp.base}/jwks`)).body);
    await expect(jwtVerify(old, jwks, { audience: "dev-client" })).rejects.toThrow(/signature/);
    const fresh = (await codeFlow(await rp(idp.issuer))).tokens.id_token!;
    expect((await jwtVerify(fresh, jwks, { audience: "dev-client" })).protectedHeader.kid).toBe("dev-key-1");
  });
});
