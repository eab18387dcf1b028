/** Identity provider: refresh tokens (offline_access), rotation, reuse and client binding. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import {
  advanceClock,
  ALICE_SUB,
  authRequest,
  client,
  codeFlow,
  type Idp,
  interactiveLogin,
  postForm,
  rejection,
  rp,
  startIdp,
  useProvider,
  userinfo,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

const idp = useProvider();

const OFFLINE = "openid email offline_access";

describe("refresh tokens", () => {
  it("offline_access yields a refresh token; without it there is none", async () => {
    const offline = await codeFlow(idp.config, { scope: OFFLINE });
    expect(typeof offline.tokens.refresh_token).toBe("string");
    expect(offline.tokens.refresh_token!.length).toBeGreaterThanOrEqual(16);
    expect(offline.tokens.scope?.split(" ")).toContain("offline_access");
    const online = await codeFlow(idp.config, { scope: "openid email" });
    expect(online.tokens.refresh_token).toBeUndefined();
  });

  it("a refresh returns new tokens and a new refresh token; the old one is then invalid_grant", async () => {
    const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
    const first = tokens.refresh_token!;
    const refreshed = await client.refreshTokenGrant(idp.config, first);
    expect(refreshed.access_token).toBeTruthy();
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(first);
    expect(refreshed.token_type.toLowerCase()).toBe("bearer");
    if (refreshed.id_token) expect(decodeJwt(refreshed.id_token).sub).toBe(ALICE_SUB);
    const info = await client.fetchUserInfo(idp.config, refreshed.access_token, ALICE_SUB);
    expect(info.sub).toBe(ALICE_SUB);

    // The rotated one rotates again.
    const again = await client.refreshTokenGrant(idp.config, refreshed.refresh_token!);
    expect(again.refresh_token).toBeTruthy();
    expect(again.refresh_token).not.toBe(refreshed.refresh_token);

    const reuse = await rejection(client.refreshTokenGrant(idp.config, first));
    expect(reuse.error).toBe("invalid_grant");
    expect(reuse.status).toBe(400);
  });

  it("a refresh token cannot be redeemed by another client", async () => {
    const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const err = await rejection(client.refreshTokenGrant(webApp, tokens.refresh_token!));
    expect(err.error).toBe("invalid_grant");
    // ... and the failed attempt does not spend it for its owner.
    const ok = await client.refreshTokenGrant(idp.config, tokens.refresh_token!);
    expect(ok.access_token).toBeTruthy();
  });

  it("a garbage refresh token is invalid_grant, a missing one invalid_request", async () => {
    const garbage = await postForm(`${idp.base}/token`, {
      grant_type: "refresh_token",
      refresh_token: "not-a-refresh-token",
      client_id: "dev-client",
    });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error).toBe("invalid_grant");
    const missing = await postForm(`${idp.base}/token`, { grant_type: "refresh_token", client_id: "dev-client" });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("invalid_request");
  });

  it("web-app refreshes with its secret; a wrong secret is invalid_client", async () => {
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretPost(WEB_APP_SECRET));
    const { tokens } = await codeFlow(webApp, { scope: OFFLINE });
    const wrong = await rp(idp.issuer, "web-app", client.ClientSecretPost("nope"));
    const err = await rejection(client.refreshTokenGrant(wrong, tokens.refresh_token!));
    expect(err.error).toBe("invalid_client");
    expect(err.status).toBe(401);
    const ok = await client.refreshTokenGrant(webApp, tokens.refresh_token!);
    expect(ok.refresh_token).toBeTruthy();
  });

  it("the access token from a refresh is usable and expires after an hour", async () => {
    const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
    const refreshed = await client.refreshTokenGrant(idp.config, tokens.refresh_token!);
    expect(refreshed.expires_in).toBe(3600);
    expect((await userinfo(`${idp.base}/userinfo`, `Bearer ${refreshed.access_token}`)).status).toBe(200);
    await advanceClock(idp.base, 3601);
    expect((await userinfo(`${idp.base}/userinfo`, `Bearer ${refreshed.access_token}`)).status).toBe(401);
    // The refresh token (24 h) still works after the access token expired.
    const later = await client.refreshTokenGrant(idp.config, refreshed.refresh_token!);
    expect(later.access_token).toBeTruthy();
  });

  it("an expired refresh token (24 h) is invalid_grant", async () => {
    const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
    await advanceClock(idp.base, 24 * 3600 + 1);
    const err = await rejection(client.refreshTokenGrant(idp.config, tokens.refresh_token!));
    expect(err.error).toBe("invalid_grant");
  });
});

/** A refresh of dev-client's token, raw (so concurrent answers can be looked at one by one). */
const refresh = (token: string) => postForm(`${idp.base}/token`, { grant_type: "refresh_token", client_id: "dev-client", refresh_token: token });

/** Every token of the grant is dead: each refresh token is invalid_grant, each access token 401 at /userinfo and inactive. */
async function expectGrantRevoked(refreshTokens: string[], accessTokens: string[]): Promise<void> {
  for (const token of refreshTokens) {
    const res = await refresh(token);
    expect(res.status, "a refresh token of the revoked grant").toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  }
  for (const token of accessTokens) {
    expect((await userinfo(`${idp.base}/userinfo`, `Bearer ${token}`)).status, "an access token of the revoked grant").toBe(401);
    const introspected = await postForm(`${idp.base}/introspect`, { token, client_id: "dev-client" });
    expect(introspected.status).toBe(200);
    expect(introspected.body.active).toBe(false);
  }
}

describe("refresh token reuse revokes the grant (RFC 9700 §4.14.2)", () => {
  it("the old token replayed after its successor was used: invalid_grant, and the successor's tokens die", async () => {
    const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
    const second = await refresh(tokens.refresh_token!);
    expect(second.status).toBe(200);
    const third = await refresh(second.body.refresh_token as string);
    expect(third.status).toBe(200);
    expect((await userinfo(`${idp.base}/userinfo`, `Bearer ${third.body.access_token}`)).status).toBe(200);

    const replay = await refresh(tokens.refresh_token!);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    await expectGrantRevoked(
      [third.body.refresh_token as string],
      [tokens.access_token, second.body.access_token as string, third.body.access_token as string],
    );
  });

  it("the old token replayed before its successor was used: the successor is dead", async () => {
    const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
    const second = await refresh(tokens.refresh_token!);
    expect(second.status).toBe(200);

    const replay = await refresh(tokens.refresh_token!);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    await expectGrantRevoked([second.body.refresh_token as string], [tokens.access_token, second.body.access_token as string]);
    // Replayed again, still invalid_grant.
    expect((await refresh(tokens.refresh_token!)).body.error).toBe("invalid_grant");
  });

  it("a replay racing the successor's use: afterwards no token of the grant works, whichever came first", async () => {
    for (let round = 0; round < 10; round++) {
      const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
      const second = await refresh(tokens.refresh_token!);
      expect(second.status).toBe(200);
      const successor = second.body.refresh_token as string;
      const [use, replay] = await Promise.all([refresh(successor), refresh(tokens.refresh_token!)]);
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe("invalid_grant");
      expect([200, 400]).toContain(use.status);
      const issued = use.status === 200 ? use.body : {};
      await expectGrantRevoked(
        [successor, ...(typeof issued.refresh_token === "string" ? [issued.refresh_token] : [])],
        [tokens.access_token, second.body.access_token as string, ...(typeof issued.access_token === "string" ? [issued.access_token] : [])],
      );
    }
  });

  it("one token used twice at the same moment: one answer at most gets tokens, and they die with the grant", async () => {
    for (let round = 0; round < 8; round++) {
      const { tokens } = await codeFlow(idp.config, { scope: OFFLINE });
      const answers = await Promise.all([refresh(tokens.refresh_token!), refresh(tokens.refresh_token!)]);
      expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(1);
      for (const a of answers) if (a.status !== 200) expect(a.body.error).toBe("invalid_grant");
      const issued = answers.flatMap((a) => (a.status === 200 ? [a.body] : []));
      await expectGrantRevoked(
        issued.map((b) => b.refresh_token as string),
        [tokens.access_token, ...issued.map((b) => b.access_token as string)],
      );
    }
  });
});

describe("with JWT access tokens, reuse at the same moment (signing takes a while)", () => {
  let jwtIdp: Idp;
  beforeAll(async () => {
    jwtIdp = await startIdp({ IDP_ACCESS_TOKEN_FORMAT: "jwt" });
  });
  afterAll(() => jwtIdp?.svc.stop());

  /** The loser's refusal arrived while the winner's access token was being signed: it once ended the process. */
  it("a code redeemed twice at once: tokens once at most, dead afterwards, and the provider keeps answering", async () => {
    const config = await rp(jwtIdp.issuer);
    for (let round = 0; round < 6; round++) {
      const request = await authRequest(config, { scope: OFFLINE });
      const { callback } = await interactiveLogin(request.url, "alice");
      const form = {
        grant_type: "authorization_code",
        code: callback.searchParams.get("code")!,
        redirect_uri: callback.origin + callback.pathname,
        client_id: "dev-client",
        code_verifier: request.verifier!,
      };
      const answers = await Promise.all([postForm(`${jwtIdp.base}/token`, form), postForm(`${jwtIdp.base}/token`, form)]);
      expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(1);
      for (const a of answers) if (a.status !== 200) expect(a.body.error).toBe("invalid_grant");
      for (const a of answers.filter((a) => a.status === 200)) {
        expect((await userinfo(`${jwtIdp.base}/userinfo`, `Bearer ${a.body.access_token}`)).status).toBe(401);
        const again = await postForm(`${jwtIdp.base}/token`, {
          grant_type: "refresh_token",
          client_id: "dev-client",
          refresh_token: a.body.refresh_token as string,
        });
        expect(again.body.error).toBe("invalid_grant");
      }
      expect((await fetch(`${jwtIdp.base}/healthz`)).status).toBe(200);
    }
  });

  it("a refresh token used twice at once: the provider keeps answering", async () => {
    const config = await rp(jwtIdp.issuer);
    for (let round = 0; round < 6; round++) {
      const { tokens } = await codeFlow(config, { scope: OFFLINE });
      const form = { grant_type: "refresh_token", client_id: "dev-client", refresh_token: tokens.refresh_token! };
      const answers = await Promise.all([postForm(`${jwtIdp.base}/token`, form), postForm(`${jwtIdp.base}/token`, form)]);
      expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(1);
      for (const a of answers) if (a.status !== 200) expect(a.body.error).toBe("invalid_grant");
      expect((await fetch(`${jwtIdp.base}/healthz`)).status).toBe(200);
    }
  });
});

describe("client credentials (advertised in discovery)", () => {
  it("web-app gets an access token for itself: no ID token, no refresh token", async () => {
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const tokens = await client.clientCredentialsGrant(webApp, {});
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.refresh_token).toBeUndefined();
    expect((await client.tokenIntrospection(webApp, tokens.access_token)).active).toBe(true);
  });

  it("a wrong secret is 401 invalid_client; a public client is refused", async () => {
    const wrong = await rp(idp.issuer, "web-app", client.ClientSecretBasic("nope"));
    const err = await rejection(client.clientCredentialsGrant(wrong, {}));
    expect(err.error).toBe("invalid_client");
    expect(err.status).toBe(401);
    const pub = await rejection(client.clientCredentialsGrant(idp.config, {}));
    expect(["unauthorized_client", "invalid_client"]).toContain(pub.error);
  });
});
