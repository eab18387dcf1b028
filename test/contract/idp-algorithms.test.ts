/**
 * Signing algorithms: RS256, PS256, ES256 and EdDSA (Ed25519), chosen per client with
 * `id_token_signed_response_alg` and `userinfo_signed_response_alg`, for ID tokens, signed
 * userinfo responses (application/jwt) and JWT access tokens. Each algorithm has its key in
 * /jwks (kid and alg); the key scenarios and rotation work for every one of them. openid-client
 * runs the flows (checking signatures against /jwks); jose verifies each token independently.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalJWKSet, decodeProtectedHeader, type JWK, jwtVerify } from "jose";
import { ALICE_SUB, client, codeFlow, failOnServerErrors, getJson, type Idp, REDIRECT_URI, rp, startIdp } from "./idp-helpers.ts";

failOnServerErrors();

const ALGS = ["RS256", "PS256", "ES256", "EdDSA"] as const;
const clientId = (alg: string) => `${alg.toLowerCase()}-app`;
let idp: Idp;

beforeAll(async () => {
  const clients = ALGS.map((alg) => ({
    client_id: clientId(alg),
    redirect_uris: [REDIRECT_URI],
    id_token_signed_response_alg: alg,
    userinfo_signed_response_alg: alg,
  }));
  idp = await startIdp({ IDP_CLIENTS: JSON.stringify(clients), IDP_ACCESS_TOKEN_FORMAT: "jwt", IDP_SIGNING_KEYS: "" }); // generated: it rotates them
});
afterAll(() => idp?.svc.stop());

const jwks = async () => (await getJson<{ keys: JWK[] }>(`${idp.base}/jwks`)).body;

function relyingParty(alg: string) {
  return rp(idp.issuer, clientId(alg), client.None(), { id_token_signed_response_alg: alg, userinfo_signed_response_alg: alg });
}

describe("discovery and /jwks", () => {
  it("advertise the four algorithms, and /jwks has one active key with kid and alg for each", async () => {
    const { body } = await getJson<Record<string, string[]>>(`${idp.base}/.well-known/openid-configuration`);
    expect(body.id_token_signing_alg_values_supported).toEqual([...ALGS]);
    expect(body.userinfo_signing_alg_values_supported).toEqual([...ALGS]);
    const keys = (await jwks()).keys;
    for (const alg of ALGS) {
      const active = keys.filter((k) => k.alg === alg && k.kid!.startsWith("dev-key-1"));
      expect(active, alg).toHaveLength(1);
    }
  });
});

describe.each(ALGS)("%s client", (alg) => {
  it("ID token, JWT access token and signed userinfo are signed with it, and verify against /jwks", async () => {
    const config = await relyingParty(alg);
    const { tokens, claims } = await codeFlow(config, { scope: "openid email" });
    expect(claims.sub).toBe(ALICE_SUB);
    const keys = createLocalJWKSet(await jwks());
    const id = await jwtVerify(tokens.id_token!, keys, { issuer: idp.issuer, audience: clientId(alg), algorithms: [alg] });
    expect(id.protectedHeader).toMatchObject({ alg, typ: "JWT" });
    const access = await jwtVerify(tokens.access_token, keys, { issuer: idp.issuer, algorithms: [alg], typ: "at+jwt" });
    expect(access.payload.client_id).toBe(clientId(alg));

    // openid-client asks for and checks the signed userinfo response.
    const info = await client.fetchUserInfo(config, tokens.access_token, ALICE_SUB);
    expect(info.email).toBe("alice@example.test");
    const res = await fetch(`${idp.base}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(res.headers.get("content-type")).toMatch(/^application\/jwt/);
    const signed = await jwtVerify(await res.text(), keys, { issuer: idp.issuer, audience: clientId(alg), algorithms: [alg] });
    expect(signed.payload).toMatchObject({ sub: ALICE_SUB, email: "alice@example.test" });
  });

  it("the key-rotated scenario signs with the algorithm's rotated key, which /jwks publishes", async () => {
    const { tokens } = await codeFlow(await relyingParty(alg), { login: "key-rotated" });
    const header = decodeProtectedHeader(tokens.id_token!);
    expect(header.alg).toBe(alg);
    expect(header.kid).toMatch(/^rotated-key-2/);
    await jwtVerify(tokens.id_token!, createLocalJWKSet(await jwks()), { algorithms: [alg] });
  });
});

it("a client without a registered algorithm gets RS256 and plain JSON userinfo", async () => {
  const { tokens } = await codeFlow(await rp(idp.issuer));
  expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: "RS256", kid: "dev-key-1" });
  const res = await fetch(`${idp.base}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  await res.arrayBuffer();
});

it("the key endpoint's empty mode serves no keys of any algorithm; normal mode all again", async () => {
  const mode = (m: string) =>
    fetch(`${idp.base}/debug/jwks-mode`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ mode: m }) })
      .then((r) => r.arrayBuffer());
  await mode("empty");
  expect((await jwks()).keys).toEqual([]);
  await mode("normal");
  expect((await jwks()).keys).toHaveLength(9);
});

// Last in the file: the keys stay rotated for the rest of this provider's life.
it("rotation replaces every algorithm's active key; the previous one is published as its rotated key", async () => {
  const byKid = (keys: JWK[]) => Object.fromEntries(keys.map((k) => [k.kid, JSON.stringify({ ...k, kid: undefined })]));
  const before = byKid((await jwks()).keys);
  const res = await fetch(`${idp.base}/debug/keys/rotate`, { method: "POST" });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const after = byKid((await jwks()).keys);
  for (const [active, rotated] of [["dev-key-1", "rotated-key-2"], ...["ps256", "es256", "eddsa"].map((a) => [`dev-key-1-${a}`, `rotated-key-2-${a}`])]) {
    expect(after[active!], active).not.toBe(before[active!]);
    expect(after[rotated!], rotated).toBe(before[active!]);
  }
  for (const alg of ALGS) {
    const { tokens } = await codeFlow(await relyingParty(alg));
    await jwtVerify(tokens.id_token!, createLocalJWKSet(await jwks()), { algorithms: [alg] });
  }
});
