/**
 * Identity provider: DPoP (RFC 9449) sender-constrained tokens. The happy paths use openid-client's
 * DPoP handle (ES256 and RS256); the negative cases use proofs crafted with jose.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import {
  ALICE_SUB,
  authRequest,
  client,
  codeFlow,
  debugJson,
  dpopProof,
  interactiveLogin,
  postForm,
  type ProofKey,
  proofKey,
  REDIRECT_URI,
  rejection,
  rp,
  useProvider,
  userinfo,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

const idp = useProvider();
let tokenUrl: string;
let userinfoUrl: string;
beforeAll(() => {
  tokenUrl = `${idp.issuer}/token`;
  userinfoUrl = `${idp.issuer}/userinfo`;
});

/** Login plus a hand-made token request carrying `proof` (or a fresh valid proof of `key`). */
async function tokenWithProof(key: ProofKey, proof?: string, scope = "openid email") {
  const request = await authRequest(idp.config, { scope });
  const { callback } = await interactiveLogin(request.url, "alice");
  return postForm(
    `${idp.base}/token`,
    {
      grant_type: "authorization_code",
      code: callback.searchParams.get("code")!,
      redirect_uri: REDIRECT_URI,
      client_id: "dev-client",
      code_verifier: request.verifier!,
    },
    { dpop: proof ?? (await dpopProof(key, { htm: "POST", htu: tokenUrl })) },
  );
}

async function boundToken(key: ProofKey): Promise<string> {
  const res = await tokenWithProof(key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token as string;
}

describe("DPoP with openid-client", () => {
  for (const alg of ["ES256", "RS256"] as const) {
    it(`${alg}: the token is DPoP-bound and userinfo works only with a proof of that key`, async () => {
      const dpop = client.getDPoPHandle(idp.config, await client.randomDPoPKeyPair(alg));
      const { tokens } = await codeFlow(idp.config, { dpop });
      expect(tokens.token_type).toBe("dpop");
      const info = await client.fetchUserInfo(idp.config, tokens.access_token, ALICE_SUB, { DPoP: dpop });
      expect(info.sub).toBe(ALICE_SUB);

      const asBearer = await userinfo(userinfoUrl, `Bearer ${tokens.access_token}`);
      expect(asBearer.status).toBe(401);
      expect(asBearer.headers.get("www-authenticate")).toBeTruthy();

      const other = client.getDPoPHandle(idp.config, await client.randomDPoPKeyPair(alg));
      const err = await rejection(client.fetchUserInfo(idp.config, tokens.access_token, ALICE_SUB, { DPoP: other }));
      expect(err.status).toBe(401);
    });
  }

  it("without a proof the token response is a plain Bearer one", async () => {
    const { tokens } = await codeFlow(idp.config);
    expect(tokens.token_type).toBe("bearer");
  });

  it("a DPoP-bound refresh token needs a proof of the same key", async () => {
    const dpop = client.getDPoPHandle(idp.config, await client.randomDPoPKeyPair("ES256"));
    const { tokens } = await codeFlow(idp.config, { dpop, scope: "openid offline_access" });
    expect(tokens.refresh_token).toBeTruthy();

    const other = client.getDPoPHandle(idp.config, await client.randomDPoPKeyPair("ES256"));
    const wrongKey = await rejection(client.refreshTokenGrant(idp.config, tokens.refresh_token!, undefined, { DPoP: other }));
    expect(["invalid_grant", "invalid_dpop_proof"]).toContain(wrongKey.error);
    expect(wrongKey.status).toBe(400);

    const noProof = await rejection(client.refreshTokenGrant(idp.config, tokens.refresh_token!));
    expect(["invalid_grant", "invalid_dpop_proof"]).toContain(noProof.error);

    const refreshed = await client.refreshTokenGrant(idp.config, tokens.refresh_token!, undefined, { DPoP: dpop });
    expect(refreshed.token_type).toBe("dpop");
    const info = await client.fetchUserInfo(idp.config, refreshed.access_token, ALICE_SUB, { DPoP: dpop });
    expect(info.sub).toBe(ALICE_SUB);
  });

  it("introspection shows cnf.jkt of the proof key; a bearer token has no cnf", async () => {
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const dpop = client.getDPoPHandle(webApp, await client.randomDPoPKeyPair("ES256"));
    const { tokens } = await codeFlow(webApp, { dpop });
    const bound = await client.tokenIntrospection(webApp, tokens.access_token);
    expect(bound.active).toBe(true);
    expect((bound.cnf as { jkt?: string } | undefined)?.jkt).toBe(await dpop.calculateThumbprint());

    const plain = await codeFlow(webApp);
    const bearer = await client.tokenIntrospection(webApp, plain.tokens.access_token);
    expect(bearer.active).toBe(true);
    expect(bearer.cnf).toBeUndefined();

    const unknown = await client.tokenIntrospection(webApp, "not-a-token");
    expect(unknown.active).toBe(false);
  });

  it("a revoked token is inactive and refused by userinfo", async () => {
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretPost(WEB_APP_SECRET));
    const { tokens } = await codeFlow(webApp);
    await client.tokenRevocation(webApp, tokens.access_token);
    expect((await client.tokenIntrospection(webApp, tokens.access_token)).active).toBe(false);
    expect((await userinfo(userinfoUrl, `Bearer ${tokens.access_token}`)).status).toBe(401);
  });
});

describe("DPoP proofs checked at /token", () => {
  it("a valid proof gives token_type DPoP and the token listing records the key thumbprint", async () => {
    const key = await proofKey("ES256");
    const res = await tokenWithProof(key);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe("DPoP");
    const token = res.body.access_token as string;
    const listed = (await debugJson<Array<{ token_prefix: string; jkt?: string }>>(idp.base, "/tokens")).find((t) => token.startsWith(t.token_prefix));
    expect(listed?.jkt).toBe(key.thumbprint);
  });

  it("a replayed proof jti is rejected", async () => {
    const key = await proofKey("ES256");
    const proof = await dpopProof(key, { htm: "POST", htu: tokenUrl });
    expect((await tokenWithProof(key, proof)).status).toBe(200);
    const replay = await tokenWithProof(key, proof);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_dpop_proof");
  });

  const badProofs: Array<[string, (key: ProofKey) => Promise<string>]> = [
    ["wrong htm", (k) => dpopProof(k, { htm: "GET", htu: tokenUrl })],
    ["wrong htu", (k) => dpopProof(k, { htm: "POST", htu: `${idp.issuer}/elsewhere` })],
    ["stale iat", (k) => dpopProof(k, { htm: "POST", htu: tokenUrl, claims: { iat: Math.floor(Date.now() / 1000) - 600 } })],
    ["future iat", (k) => dpopProof(k, { htm: "POST", htu: tokenUrl, claims: { iat: Math.floor(Date.now() / 1000) + 600 } })],
    ["missing jti", (k) => dpopProof(k, { htm: "POST", htu: tokenUrl, claims: { jti: undefined } })],
    ["typ not dpop+jwt", (k) => dpopProof(k, { htm: "POST", htu: tokenUrl, typ: "JWT" })],
    ["private key in the header", async (k) => dpopProof(k, { htm: "POST", htu: tokenUrl, jwk: await privateJwk(k) })],
    ["signature by another key", async (k) => dpopProof(await proofKey("ES256"), { htm: "POST", htu: tokenUrl, jwk: k.publicJwk })],
    ["not a JWT", async () => "not.a.jwt"],
    ["alg other than ES256 and RS256 (PS256)", async () => {
      const { privateKey, publicKey } = await generateKeyPair("PS256");
      return new SignJWT({ jti: crypto.randomUUID(), htm: "POST", htu: tokenUrl, iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: "PS256", typ: "dpop+jwt", jwk: await exportJWK(publicKey) })
        .sign(privateKey);
    }],
    ["no jwk in the header", (k) =>
      new SignJWT({ jti: crypto.randomUUID(), htm: "POST", htu: tokenUrl, iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: k.alg, typ: "dpop+jwt" })
        .sign(k.privateKey)],
  ];
  for (const [name, make] of badProofs) {
    it(`${name}: 400 invalid_dpop_proof, no token`, async () => {
      const key = await proofKey("ES256");
      const res = await tokenWithProof(key, await make(key));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_dpop_proof");
      expect(res.body.access_token).toBeUndefined();
    });
  }
});

describe("DPoP proofs checked at /userinfo", () => {
  it("a fresh proof with ath of the token is accepted; the same proof again is rejected", async () => {
    const key = await proofKey("RS256");
    const token = await boundToken(key);
    const proof = await dpopProof(key, { htm: "GET", htu: userinfoUrl, accessToken: token });
    const ok = await userinfo(userinfoUrl, `DPoP ${token}`, proof);
    expect(ok.status).toBe(200);
    expect(ok.body.sub).toBe(ALICE_SUB);
    const replay = await userinfo(userinfoUrl, `DPoP ${token}`, proof);
    expect(replay.status).toBe(401);
  });

  const badProofs: Array<[string, (key: ProofKey, token: string) => Promise<string | undefined>]> = [
    ["no proof", async () => undefined],
    ["wrong htm", (k, t) => dpopProof(k, { htm: "POST", htu: userinfoUrl, accessToken: t })],
    ["wrong htu", (k, t) => dpopProof(k, { htm: "GET", htu: `${idp.issuer}/token`, accessToken: t })],
    ["stale iat", (k, t) => dpopProof(k, { htm: "GET", htu: userinfoUrl, accessToken: t, claims: { iat: Math.floor(Date.now() / 1000) - 600 } })],
    ["missing ath", (k) => dpopProof(k, { htm: "GET", htu: userinfoUrl })],
    ["ath of another token", (k) => dpopProof(k, { htm: "GET", htu: userinfoUrl, accessToken: "some-other-token" })],
    ["private key in the header", async (k, t) => dpopProof(k, { htm: "GET", htu: userinfoUrl, accessToken: t, jwk: await privateJwk(k) })],
    ["proof of a different key", async (_k, t) => dpopProof(await proofKey("ES256"), { htm: "GET", htu: userinfoUrl, accessToken: t })],
  ];
  for (const [name, make] of badProofs) {
    it(`${name}: 401`, async () => {
      const key = await proofKey("ES256");
      const token = await boundToken(key);
      const res = await userinfo(userinfoUrl, `DPoP ${token}`, await make(key, token));
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBeTruthy();
      expect(res.body.sub).toBeUndefined();
      // The token itself is still good with a correct proof.
      const ok = await userinfo(userinfoUrl, `DPoP ${token}`, await dpopProof(key, { htm: "GET", htu: userinfoUrl, accessToken: token }));
      expect(ok.status).toBe(200);
    });
  }
});

/** The full private JWK (with `d`), which a proof header must never carry. */
function privateJwk(key: ProofKey) {
  return exportJWK(key.privateKey);
}
