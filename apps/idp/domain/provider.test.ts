/**
 * State stays bounded: expired codes, tokens, sessions, grants and replay entries are pruned as
 * the provider writes, and a ceiling caps each kind under a burst. Driven through the real routes
 * (`app.request`) with an injected clock, so "a day later" takes no time; once on the memory
 * store and once on the SQL store.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { nodeRuntime } from "#lib/adapters/node";
import { openSqlStore } from "#lib/db/open";
import { createLogger } from "#lib/log";
import { createIdp } from "../app.ts";
import { MemoryStateStore } from "../state/memory.ts";
import { sqlStateStore } from "../state/sql.ts";
import { type IdpStateStore, RESETTABLE_KINDS, type StateKind } from "../state/store.ts";
import { MAX_LIVE, type Provider } from "./provider.ts";

const ISSUER = "http://idp.test";
const REDIRECT = "http://localhost:3000/callback";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const DAY_S = 86_400;
/** Every kind a flow creates, and how many of each one round leaves behind. */
const PER_ROUND: Partial<Record<StateKind, number>> = {
  session: 1,
  code: 0, // redeemed
  used_code: 1,
  used_refresh_token: 1,
  access_token: 2,
  refresh_token: 1, // rotated
  device_grant: 1,
  user_code: 1,
  replay: 2,
};

const STORES: [string, () => Promise<IdpStateStore>][] = [
  ["memory", async () => new MemoryStateStore()],
  ["SQL", async () => sqlStateStore(await openSqlStore(nodeRuntime(), ":memory:"), { shared: false })],
];

describe.each(STORES)("%s store", (_name, openState) => {
  let clock = Date.parse("2026-01-01T00:00:00.000Z");
  let idp: Awaited<ReturnType<typeof createIdp>>;
  let proofKey: { privateKey: CryptoKey; jwk: Record<string, unknown> };

  beforeAll(async () => {
    idp = await createIdp({ issuer: ISSUER, now: () => clock, logger: createLogger({ level: "silent" }), state: await openState() });
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    proofKey = { privateKey, jwk: { ...(await exportJWK(publicKey)) } };
  });

  const state = (): Provider["state"] => idp.provider.state;
  const count = async (kind: StateKind) => (await state().entries(kind)).length;
  const counts = async () => {
    return Object.fromEntries(await Promise.all(Object.keys(PER_ROUND).map(async (k) => [k, await count(k as StateKind)] as const))) as Record<string, number>;
  };

  function proof(htu: string): Promise<string> {
    return new SignJWT({ jti: crypto.randomUUID(), htm: "POST", htu, iat: Math.floor(clock / 1000) })
      .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: proofKey.jwk })
      .sign(proofKey.privateKey);
  }

  /**
   * One login (session + code), its DPoP-bound redemption (tokens, used code, replay entry), a
   * refresh (a new access token, the refresh token rotated and remembered as used, a replay
   * entry) and a device grant.
   */
  async function round(): Promise<void> {
    const login = await idp.app.request(`${ISSUER}/authorize`, {
      method: "POST",
      headers: FORM,
      body: new URLSearchParams({ client_id: "dev-client", redirect_uri: REDIRECT, response_type: "code", scope: "openid offline_access", login: "alice" }),
    });
    expect(login.status).toBe(302);
    const code = new URL(login.headers.get("location")!).searchParams.get("code")!;
    const token = await idp.app.request(`${ISSUER}/token`, {
      method: "POST",
      headers: { ...FORM, dpop: await proof(`${ISSUER}/token`) },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT, code }),
    });
    expect(token.status).toBe(200);
    const { refresh_token } = (await token.json()) as { refresh_token: string };
    const refreshed = await idp.app.request(`${ISSUER}/token`, {
      method: "POST",
      headers: { ...FORM, dpop: await proof(`${ISSUER}/token`) },
      body: new URLSearchParams({ grant_type: "refresh_token", client_id: "dev-client", refresh_token }),
    });
    expect(refreshed.status).toBe(200);
    const device = await idp.app.request(`${ISSUER}/device_authorization`, {
      method: "POST",
      headers: FORM,
      body: new URLSearchParams({ client_id: "dev-client", scope: "openid" }),
    });
    expect(device.status).toBe(200);
  }

  describe("pruning", () => {
    it("records of every kind are dropped once expired, as the provider keeps writing", async () => {
      for (let i = 0; i < 100; i++) await round();
      expect(await counts()).toEqual(Object.fromEntries(Object.entries(PER_ROUND).map(([k, n]) => [k, n * 100])));

      // A day and a half later every record above has expired (sessions and refresh tokens last
      // 24 h, device grants 10 min plus 10 min of grace); the next writes prune them.
      clock += 1.5 * DAY_S * 1000;
      for (let i = 0; i < 30; i++) await round();
      expect(await counts()).toEqual(Object.fromEntries(Object.entries(PER_ROUND).map(([k, n]) => [k, n * 30])));
    });

    it("state stays bounded over many days of steady use", async () => {
      await idp.provider.reset(RESETTABLE_KINDS);
      const peaks: number[] = [];
      for (let day = 0; day < 6; day++) {
        for (let i = 0; i < 40; i++) await round();
        peaks.push(Object.values(await counts()).reduce((a, b) => a + b, 0));
        clock += DAY_S * 1000 + 60_000;
      }
      // Each day leaves at most that day's records (plus up to one prune interval of the previous
      // day's): no growth from day to day.
      const perDay = 40 * Object.values(PER_ROUND).reduce((a, b) => a + b, 0);
      for (const peak of peaks) expect(peak).toBeLessThanOrEqual(perDay + 64);
      expect(peaks.at(-1)).toBe(peaks[1]);
    });
  });

  describe("ceiling", () => {
    it("under a burst of live records, each kind keeps at most MAX_LIVE, newest first", async () => {
      const p = idp.provider;
      await p.reset(["session"]);
      const max = MAX_LIVE.session!;
      const far = clock + DAY_S * 1000;
      for (let i = 0; i < max + 500; i++) await p.put("session", `s${i}`, { login: "x", sub: "y", auth_time: clock, expires_at: far }, { pruneAt: far });
      // Trimmed at every 256th write: never more than 255 writes over the ceiling.
      expect(await count("session")).toBeLessThanOrEqual(max + 255);
      expect(await count("session")).toBeGreaterThanOrEqual(max);
      expect(await p.state.get("session", "s0")).toBeUndefined();
      expect(await p.state.get("session", `s${max + 499}`)).toBeDefined();
    });
  });
});
