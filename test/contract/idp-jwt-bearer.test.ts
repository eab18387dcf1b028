/**
 * The JWT bearer grant (RFC 7523 §2.1) from issuers the configuration trusts
 * (IDP_JWT_BEARER_ISSUERS): an access token for the assertion's subject (or the claim an issuer
 * names), usable at /userinfo and /introspect. A bad assertion (signature, untrusted issuer,
 * audience, expiry, replayed jti) is invalid_grant and issues nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jwksServer, nowS, signJwt, type TestKey, testKey } from "./idp-jwt-helpers.ts";
import { basicAuth, client, debugCounts, failOnServerErrors, getJson, type Idp, postForm, rp, startIdp, userinfo, WEB_APP_SECRET } from "./idp-helpers.ts";

failOnServerErrors();

const GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ISSUER_A = "https://issuer-a.example.test";
const ISSUER_B = "https://issuer-b.example.test";
let idp: Idp;
let keyA: TestKey;
let keyB: TestKey;
let keyServer: Awaited<ReturnType<typeof jwksServer>>;

beforeAll(async () => {
  [keyA, keyB] = await Promise.all([testKey("ES256"), testKey("RS256")]);
  keyServer = await jwksServer([keyB.publicJwk]);
  const trusted = [
    { issuer: ISSUER_A, jwks: { keys: [keyA.publicJwk] } },
    { issuer: ISSUER_B, jwks_uri: keyServer.url, audiences: ["api://idp"], subject_claim: "email" },
  ];
  idp = await startIdp({ IDP_JWT_BEARER_ISSUERS: JSON.stringify(trusted) });
});
afterAll(async () => {
  await idp?.svc.stop();
  await keyServer?.close();
});

const claimsA = (overrides: Record<string, unknown> = {}) => ({
  iss: ISSUER_A,
  sub: "service-user-1",
  aud: idp.issuer,
  exp: nowS() + 300,
  iat: nowS(),
  jti: crypto.randomUUID(),
  ...overrides,
});

const grant = (assertion: string, extra: Record<string, string> = {}) =>
  postForm(`${idp.base}/token`, { grant_type: GRANT, assertion, client_id: "dev-client", ...extra });

describe("accepted", () => {
  it("discovery lists the grant", async () => {
    const { body } = await getJson<{ grant_types_supported: string[] }>(`${idp.base}/.well-known/openid-configuration`);
    expect(body.grant_types_supported).toContain(GRANT);
  });

  it("openid-client: web-app trades an assertion of a trusted issuer for an access token of its subject", async () => {
    const config = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const tokens = await client.genericGrantRequest(config, GRANT, { assertion: await signJwt(claimsA(), keyA), scope: "profile email" });
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.scope).toBe("profile email");
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.refresh_token).toBeUndefined();
    const info = await userinfo(`${idp.base}/userinfo`, `Bearer ${tokens.access_token}`);
    expect(info.body.sub).toBe("service-user-1");
    expect(await client.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, sub: "service-user-1", client_id: "web-app" });
  });

  it("an issuer with a loopback jwks_uri, its own audience and the subject from another claim", async () => {
    const assertion = await signJwt({ iss: ISSUER_B, sub: "ignored", email: "svc@example.test", aud: "api://idp", exp: nowS() + 60 }, keyB);
    const res = await grant(assertion);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await userinfo(`${idp.base}/userinfo`, `Bearer ${res.body.access_token}`)).body.sub).toBe("svc@example.test");
  });
});

describe("refused: invalid_grant, nothing issued", () => {
  it.each([
    ["a bad signature", async () => signJwt(claimsA(), await testKey("ES256", keyA.kid)), /signature/],
    ["an issuer not trusted", async () => signJwt(claimsA({ iss: "https://stranger.example.test" }), keyA), /not trusted/],
    ["another audience", async () => signJwt(claimsA({ aud: "https://other.example.test" }), keyA), /aud/],
    ["the issuer's audience is its own list", async () => signJwt({ iss: ISSUER_B, email: "x@example.test", aud: idp.issuer, exp: nowS() + 60 }, keyB), /aud/],
    ["expired", async () => signJwt(claimsA({ exp: nowS() - 30 }), keyA), /exp/],
    ["no exp", async () => signJwt(claimsA({ exp: undefined }), keyA), /exp/],
    ["exp too far ahead", async () => signJwt(claimsA({ exp: nowS() + 7200 }), keyA), /exp is more than/],
    ["no subject", async () => signJwt(claimsA({ sub: undefined }), keyA), /sub/],
    ["not a JWT", async () => "not-a-jwt", /not a JWT/],
  ])("%s", async (_name, make, description) => {
    const before = (await debugCounts(idp.base)).tokens;
    const res = await grant(await make());
    expect([res.status, res.body.error]).toEqual([400, "invalid_grant"]);
    expect(String(res.body.error_description)).toMatch(description);
    expect((await debugCounts(idp.base)).tokens).toBe(before);
  });

  it("a replayed jti (also at the other instance)", async () => {
    const assertion = await signJwt(claimsA(), keyA);
    expect((await grant(assertion)).status).toBe(200);
    const again = await grant(assertion);
    expect([again.status, again.body.error, again.body.error_description]).toEqual([400, "invalid_grant", expect.stringMatching(/jti was already used/)]);
  });

  it("a jti spent at one issuer is spent at the issuers by path too (configured audiences are accepted at each)", async () => {
    const assertion = await signJwt({ iss: ISSUER_B, email: "svc@example.test", aud: "api://idp", exp: nowS() + 60, jti: crypto.randomUUID() }, keyB);
    expect((await grant(assertion)).status).toBe(200);
    const before = (await debugCounts(idp.base)).tokens;
    const elsewhere = await postForm(`${idp.base}/tenant-a/token`, { grant_type: GRANT, assertion, client_id: "dev-client" });
    expect([elsewhere.status, elsewhere.body.error]).toEqual([400, "invalid_grant"]);
    expect(elsewhere.body.error_description).toMatch(/jti was already used/);
    expect((await debugCounts(idp.base)).tokens).toBe(before);
  });

  it("the token scenarios of the subject's login apply (token-invalid-grant)", async () => {
    const res = await grant(await signJwt(claimsA({ sub: "token-invalid-grant" }), keyA));
    expect([res.status, res.body.error, res.body.error_description]).toEqual([400, "invalid_grant", "scenario token-invalid-grant"]);
  });

  it("a jti that is not a string of 1 to 256 characters", async () => {
    for (const jti of [["j".repeat(1000)], "j".repeat(257)]) {
      const res = await grant(await signJwt(claimsA({ jti }), keyA));
      expect([res.status, res.body.error, res.body.error_description]).toEqual([400, "invalid_grant", expect.stringMatching(/jti must be a string/)]);
    }
  });

  it("no assertion is invalid_request; openid or offline_access is invalid_scope; a bad client is invalid_client", async () => {
    const missing = await postForm(`${idp.base}/token`, { grant_type: GRANT, client_id: "dev-client" });
    expect([missing.status, missing.body.error]).toEqual([400, "invalid_request"]);
    const scoped = await grant(await signJwt(claimsA(), keyA), { scope: "openid" });
    expect([scoped.status, scoped.body.error]).toEqual([400, "invalid_scope"]);
    // A tab is no separator (RFC 6749 §3.3): "profile\topenid" is a malformed token, not a way past the openid rule.
    const hidden = await grant(await signJwt(claimsA(), keyA), { scope: "profile\topenid" });
    expect([hidden.status, hidden.body.error, hidden.body.error_description]).toEqual([400, "invalid_scope", expect.stringMatching(/malformed/)]);
    const badClient = await postForm(`${idp.base}/token`, { grant_type: GRANT, assertion: await signJwt(claimsA(), keyA) }, {
      authorization: basicAuth("web-app", "wrong"),
    });
    expect([badClient.status, badClient.body.error]).toEqual([401, "invalid_client"]);
  });
});
