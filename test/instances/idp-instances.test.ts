/**
 * Two instances of the identity provider on one state database, reached directly (no proxy), on
 * Node and on Deno: a code, a refresh token, a device code and a DPoP proof presented at both at
 * the same moment are accepted exactly once; a replayed code revokes at the other instance what
 * the first issued; both serve the same keys. (The contract suites also run against two instances
 * behind a round-robin proxy: the `node-pair` and `deno-pair` projects.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dpopProof, proofKey, stateDatabase } from "../contract/idp-helpers.ts";
import { type RunningService, type RuntimeName, startService } from "../runtimes/service.ts";

/** One issuer for both, as behind a load balancer (the origin the tests call differs per instance). */
const ISSUER = "http://idp.test";
const REDIRECT = "http://127.0.0.1:3000/callback";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const ROUNDS = 8;

describe.each<RuntimeName>(["node", "deno"])("%s: two instances on one database", (runtime) => {
  let a: RunningService;
  let b: RunningService;
  let database: ReturnType<typeof stateDatabase>;

  beforeAll(async () => {
    database = stateDatabase();
    const env = { IDP_ISSUER: ISSUER, IDP_STATE: database.url, IDP_SIGNING_KEYS: "" }; // they race to generate and store keys
    [a, b] = await Promise.all([startService("idp", { env }, runtime), startService("idp", { env }, runtime)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    database?.cleanup();
  });

  const post = (svc: RunningService, path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(svc.baseUrl + path, { method: "POST", headers: { ...FORM, ...headers }, body: new URLSearchParams(form), redirect: "manual" });

  /** A code for alice from a login at `svc` (scope with offline_access, so a refresh token follows). */
  async function code(svc: RunningService): Promise<string> {
    const res = await post(svc, "/authorize", {
      client_id: "dev-client",
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: "openid offline_access",
      login: "alice",
    });
    expect(res.status).toBe(302);
    return new URL(res.headers.get("location")!).searchParams.get("code")!;
  }
  const redeem = (svc: RunningService, c: string) =>
    post(svc, "/token", { grant_type: "authorization_code", client_id: "dev-client", redirect_uri: REDIRECT, code: c });

  /** Each instance gets `each` of the same request at once; the answers, winners first. */
  async function race(each: number, send: (svc: RunningService) => Promise<Response>): Promise<{ svc: RunningService; res: Response }[]> {
    const targets = Array.from({ length: 2 * each }, (_, i) => (i % 2 ? b : a));
    const answers = await Promise.all(targets.map(async (svc) => ({ svc, res: await send(svc) })));
    return answers.sort((x, y) => x.res.status - y.res.status);
  }
  const other = (svc: RunningService) => (svc === a ? b : a);
  const bearer = (svc: RunningService, token: string) => fetch(svc.baseUrl + "/userinfo", { headers: { authorization: `Bearer ${token}` } });

  it("a code redeemed at both at the same moment gives tokens once at most, and the replays revoke them at both", async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const c = await code(i % 2 ? a : b);
      const answers = await race(3, (svc) => redeem(svc, c));
      // An attempt that came after the winner took the code is a replay, which revokes the grant
      // (RFC 6749 §4.1.2); one that lands while the winner is still storing its tokens makes the
      // winner undo them and fail too. So at most one 200, and the rest invalid_grant.
      const [winner, ...losers] = answers;
      expect(answers.filter((x) => x.res.status === 200).length).toBeLessThanOrEqual(1);
      for (const l of winner!.res.status === 200 ? losers : answers) {
        expect(l.res.status).toBe(400);
        expect(((await l.res.json()) as { error: string }).error).toBe("invalid_grant");
      }
      if (winner!.res.status !== 200) continue;
      // Every loser was a reuse, whenever it landed, so the winner's tokens are revoked at both
      // (an attack on this change found a window where a loser revoked nothing).
      const tokens = (await winner!.res.json()) as { access_token: string };
      const [here, there] = await Promise.all([bearer(winner!.svc, tokens.access_token), bearer(other(winner!.svc), tokens.access_token)]);
      expect([here.status, there.status]).toEqual([401, 401]);
    }
  });

  // Six uses of one refresh token at once are one rotation and five reuses, and a reuse revokes
  // the grant (RFC 9700 §4.14.2), whichever instance it reached and whenever it landed.
  it("a refresh token used at both at the same moment rotates at most once, and the reuse revokes the grant at both", async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const tokens = (await (await redeem(a, await code(b))).json()) as { refresh_token: string; access_token: string };
      const refresh = (svc: RunningService, token: string) =>
        post(svc, "/token", { grant_type: "refresh_token", client_id: "dev-client", refresh_token: token });
      const answers = await race(3, (svc) => refresh(svc, tokens.refresh_token));
      const winners = answers.filter((x) => x.res.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      expect(answers.filter((x) => x.res.status !== 200).map((x) => x.res.status)).toEqual(Array(6 - winners.length).fill(400));
      for (const l of answers.filter((x) => x.res.status !== 200)) expect(((await l.res.json()) as { error: string }).error).toBe("invalid_grant");
      const issued = await Promise.all(winners.map(async (w) => (await w.res.json()) as { refresh_token: string; access_token: string }));
      for (const svc of [a, b]) {
        expect((await bearer(svc, tokens.access_token)).status).toBe(401);
        for (const t of issued) {
          expect((await refresh(svc, t.refresh_token)).status).toBe(400);
          expect((await bearer(svc, t.access_token)).status).toBe(401);
        }
      }
    }
  });

  it("a device code started at one instance and approved at the other is exchanged once when polled at both", async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const grant = (await (await post(a, "/device_authorization", { client_id: "dev-client", scope: "openid" })).json()) as {
        device_code: string;
        user_code: string;
      };
      const approve = await post(b, "/device", { user_code: grant.user_code, action: "approve", login: "alice" });
      expect(approve.status).toBe(200);
      const poll = (svc: RunningService) =>
        post(svc, "/token", { grant_type: "urn:ietf:params:oauth:grant-type:device_code", client_id: "dev-client", device_code: grant.device_code });
      expect((await race(3, poll)).map((r) => r.res.status)).toEqual([200, 400, 400, 400, 400, 400]);
    }
  });

  it("a DPoP proof presented at both is accepted once", async () => {
    const key = await proofKey();
    for (let i = 0; i < ROUNDS; i++) {
      const proof = await dpopProof(key, { htm: "POST", htu: `${ISSUER}/token` });
      const grant = (svc: RunningService) =>
        post(svc, "/token", { grant_type: "client_credentials", scope: "api" }, { dpop: proof, authorization: "Basic " + btoa("web-app:web-app-secret") });
      expect((await race(3, grant)).map((r) => r.res.status)).toEqual([200, 400, 400, 400, 400, 400]);
    }
  });

  it("a code replayed at the other instance is refused there and revokes what it issued", async () => {
    const c = await code(a);
    const first = (await (await redeem(a, c)).json()) as { access_token: string; refresh_token: string };
    const userinfo = (svc: RunningService) => fetch(svc.baseUrl + "/userinfo", { headers: { authorization: `Bearer ${first.access_token}` } });
    expect((await userinfo(b)).status).toBe(200);
    const replay = await redeem(b, c);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await userinfo(a)).status).toBe(401);
    const refresh = await post(a, "/token", { grant_type: "refresh_token", client_id: "dev-client", refresh_token: first.refresh_token });
    expect(refresh.status).toBe(400);
  });

  it("both publish the same keys, and a rotation at one is what the other publishes next", async () => {
    const jwks = async (svc: RunningService) => (await (await fetch(svc.baseUrl + "/jwks")).json()) as { keys: { kid: string; n: string }[] };
    expect(await jwks(a)).toEqual(await jwks(b));
    const rotated = await fetch(a.baseUrl + "/debug/keys/rotate", { method: "POST" });
    expect(rotated.status).toBe(200);
    await rotated.arrayBuffer();
    expect(await jwks(b)).toEqual(await jwks(a));
    // A token signed at one instance verifies against the other's key set.
    const tokens = (await (await redeem(b, await code(a))).json()) as { id_token: string };
    const { createLocalJWKSet, jwtVerify } = await import("jose");
    await expect(jwtVerify(tokens.id_token, createLocalJWKSet(await jwks(a)), { issuer: ISSUER, audience: "dev-client" })).resolves.toBeTruthy();
  });

  it("the debug settings set at one instance hold at the other", async () => {
    const debug = (svc: RunningService, path: string, body: unknown) =>
      fetch(svc.baseUrl + "/debug" + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await debug(a, "/jwks-mode", { mode: "500" })).status).toBe(200);
    expect((await fetch(b.baseUrl + "/jwks")).status).toBe(500);
    expect((await debug(b, "/scenarios", { login: "carol", tenant: "tenant-c" })).status).toBe(201);
    const page = await (await fetch(`${a.baseUrl}/authorize?client_id=dev-client&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=openid`))
      .text();
    expect(page).toContain('data-login="carol"');
    const moved = (await (await debug(a, "/clock", { advance_seconds: 3600 })).json()) as { offset_seconds: number };
    const movedAgain = (await (await debug(b, "/clock", { advance_seconds: 60 })).json()) as { offset_seconds: number };
    expect(movedAgain.offset_seconds).toBe(moved.offset_seconds + 60);
    expect((await debug(b, "/reset", {})).status).toBe(200);
    expect((await fetch(a.baseUrl + "/jwks")).status).toBe(200);
    expect(((await (await fetch(a.baseUrl + "/debug")).json()) as { counts: { sessions: number } }).counts.sessions).toBe(0);
  });
});
