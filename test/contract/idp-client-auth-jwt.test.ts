/**
 * JWT client authentication (OIDC Core §9, RFC 7523 §2.2): private_key_jwt with a registered
 * `jwks` or a loopback `jwks_uri`, and client_secret_jwt, at /token, /introspect and /revoke.
 * openid-client drives the positive paths; hand-made assertions every refusal, each of which is
 * 401 invalid_client and issues nothing. A jti is single use, also across two instances.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertionClaims, assertionFields, jwksServer, nowS, signJwt, type TestKey, testKey } from "./idp-jwt-helpers.ts";
import { basicAuth, client, codeFlow, debugCounts, failOnServerErrors, getJson, type Idp, postForm, REDIRECT_URI, rp, startIdp } from "./idp-helpers.ts";

failOnServerErrors();

const HS_SECRET = "client-secret-jwt-secret-of-at-least-32-bytes";
let idp: Idp;
let ecKey: TestKey;
let rsKey: TestKey;
let keyServer: Awaited<ReturnType<typeof jwksServer>>;

beforeAll(async () => {
  [ecKey, rsKey] = await Promise.all([testKey("ES256"), testKey("RS256")]);
  keyServer = await jwksServer([rsKey.publicJwk]);
  const clients = [
    {
      client_id: "pkjwt-app",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "private_key_jwt",
      token_endpoint_auth_signing_alg: "ES256",
      jwks: { keys: [ecKey.publicJwk] },
    },
    { client_id: "pkjwt-uri", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "private_key_jwt", jwks_uri: keyServer.url },
    {
      client_id: "csjwt-app",
      client_secret: HS_SECRET,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "client_secret_jwt",
      token_endpoint_auth_signing_alg: "HS256",
    },
  ];
  idp = await startIdp({ IDP_CLIENTS: JSON.stringify(clients) });
});
afterAll(async () => {
  await idp?.svc.stop();
  await keyServer?.close();
});

const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(`${idp.base}/token`, { grant_type: "client_credentials", ...fields }, headers);

async function expectInvalidClient(res: Promise<{ status: number; body: Record<string, unknown> }>, description: RegExp) {
  const { status, body } = await res;
  expect(body.error, JSON.stringify(body)).toBe("invalid_client");
  expect(status).toBe(401);
  expect(String(body.error_description)).toMatch(description);
}

describe("discovery", () => {
  it("lists the methods and their algorithms for token, introspection and revocation", async () => {
    const { body } = await getJson<Record<string, string[]>>(`${idp.base}/.well-known/openid-configuration`);
    for (const endpoint of ["token", "introspection", "revocation"]) {
      expect(body[`${endpoint}_endpoint_auth_methods_supported`]).toEqual(expect.arrayContaining(["private_key_jwt", "client_secret_jwt"]));
      expect(body[`${endpoint}_endpoint_auth_signing_alg_values_supported`]).toEqual(expect.arrayContaining(["RS256", "PS256", "ES256", "EdDSA", "HS256"]));
      expect(body[`${endpoint}_endpoint_auth_signing_alg_values_supported`]).not.toContain("none");
    }
  });
  it("without trusted issuers configured, the JWT bearer grant is not offered", async () => {
    const { body } = await getJson<{ grant_types_supported: string[] }>(`${idp.base}/.well-known/openid-configuration`);
    expect(body.grant_types_supported).not.toContain("urn:ietf:params:oauth:grant-type:jwt-bearer");
    const res = await postForm(`${idp.base}/token`, { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: "x", client_id: "dev-client" });
    expect([res.status, res.body.error]).toEqual([400, "unsupported_grant_type"]);
  });
});

describe("openid-client", () => {
  it("private_key_jwt (jwks): code flow, introspection and revocation", async () => {
    const config = await rp(idp.issuer, "pkjwt-app", client.PrivateKeyJwt(ecKey.privateKey));
    const { tokens, claims } = await codeFlow(config);
    expect(claims.aud).toBe("pkjwt-app");
    const introspected = await client.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, client_id: "pkjwt-app" });
    await client.tokenRevocation(config, tokens.access_token);
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it("private_key_jwt (loopback jwks_uri): client_credentials", async () => {
    const config = await rp(idp.issuer, "pkjwt-uri", client.PrivateKeyJwt({ key: rsKey.privateKey, kid: rsKey.kid }));
    const tokens = await client.clientCredentialsGrant(config, { scope: "api" });
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
  });

  it("client_secret_jwt: code flow and client_credentials", async () => {
    const config = await rp(idp.issuer, "csjwt-app", client.ClientSecretJwt(HS_SECRET));
    const { claims } = await codeFlow(config);
    expect(claims.aud).toBe("csjwt-app");
    expect((await client.clientCredentialsGrant(config)).access_token).toBeTruthy();
  });
});

describe("refusals (invalid_client, nothing issued)", () => {
  const ec = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
    signJwt(assertionClaims("pkjwt-app", idp.issuer, claims), ecKey, header);

  it("accepts the token endpoint URL as aud as well as the issuer", async () => {
    const res = await token(assertionFields(await ec({ aud: `${idp.issuer}/token` })));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it("a replayed jti", async () => {
    const assertion = await ec();
    expect((await token(assertionFields(assertion))).status).toBe(200);
    await expectInvalidClient(token(assertionFields(assertion)), /jti was already used/);
    // ...at another endpoint too: the jti is spent provider-wide.
    await expectInvalidClient(postForm(`${idp.base}/introspect`, { token: "x", ...assertionFields(assertion) }), /jti was already used/);
  });

  it("of one assertion sent twice at once, exactly one is accepted (also across instances)", async () => {
    const assertion = await ec();
    const results = await Promise.all([token(assertionFields(assertion)), token(assertionFields(assertion))]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it("wrong audience, expired, exp too far ahead, nbf ahead, no exp, no jti, a jti not a string of 1 to 256 characters", async () => {
    const before = (await debugCounts(idp.base)).tokens;
    await expectInvalidClient(token(assertionFields(await ec({ aud: "https://elsewhere.example.test" }))), /aud/);
    await expectInvalidClient(token(assertionFields(await ec({ iat: nowS() - 120, exp: nowS() - 60 }))), /exp/);
    await expectInvalidClient(token(assertionFields(await ec({ exp: nowS() + 3600 }))), /exp is more than/);
    await expectInvalidClient(token(assertionFields(await ec({ nbf: nowS() + 600 }))), /nbf/);
    await expectInvalidClient(token(assertionFields(await ec({ exp: undefined }))), /exp/);
    await expectInvalidClient(token(assertionFields(await ec({ jti: undefined }))), /jti/);
    // An array's length is 1 whatever it holds: it must not pass for a short jti.
    await expectInvalidClient(token(assertionFields(await ec({ jti: ["j".repeat(1000)] }))), /jti must be a string/);
    await expectInvalidClient(token(assertionFields(await ec({ jti: "j".repeat(257) }))), /jti must be a string/);
    expect((await debugCounts(idp.base)).tokens).toBe(before);
  });

  it("iss or sub other than the client, a client_id beside it that differs", async () => {
    await expectInvalidClient(token(assertionFields(await ec({ iss: "someone-else" }))), /iss/);
    await expectInvalidClient(token(assertionFields(await ec({ sub: "csjwt-app" }))), /client_secret_jwt|iss|sub/);
    const other = await postForm(`${idp.base}/token`, { grant_type: "client_credentials", client_id: "web-app", ...assertionFields(await ec()) });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe("invalid_request");
  });

  it("a wrong key, an alg other than the registered one, an HMAC assertion for a key client", async () => {
    const stranger = await testKey("ES256", ecKey.kid);
    await expectInvalidClient(token(assertionFields(await signJwt(assertionClaims("pkjwt-app", idp.issuer), stranger))), /signature/);
    const rsa = await testKey("RS256", ecKey.kid);
    await expectInvalidClient(token(assertionFields(await signJwt(assertionClaims("pkjwt-app", idp.issuer), rsa))), /alg RS256/);
    const hmac = await signJwt(assertionClaims("pkjwt-app", idp.issuer), { alg: "HS256", secret: HS_SECRET });
    await expectInvalidClient(token(assertionFields(hmac)), /private_key_jwt, not client_secret_jwt/);
  });

  it("client_secret_jwt with a wrong secret; a key-signed assertion for a secret client", async () => {
    const wrong = await signJwt(assertionClaims("csjwt-app", idp.issuer), { alg: "HS256", secret: "not-the-secret-of-this-client-000000" });
    await expectInvalidClient(token(assertionFields(wrong)), /signature/);
    const keyed = await signJwt(assertionClaims("csjwt-app", idp.issuer), ecKey);
    await expectInvalidClient(token(assertionFields(keyed)), /client_secret_jwt, not private_key_jwt/);
  });

  it("another method than the registered one, or none", async () => {
    await expectInvalidClient(token({}, { authorization: basicAuth("csjwt-app", HS_SECRET) }), /client_secret_jwt, not client_secret_basic/);
    await expectInvalidClient(token({ client_id: "pkjwt-app" }), /client authentication required/);
  });

  it("a JWT typed for another purpose (a request object, an access or logout token), however its claims fit (RFC 8725 §3.11)", async () => {
    for (const typ of ["oauth-authz-req+jwt", "application/oauth-authz-req+jwt", "at+jwt", "logout+jwt", "dpop+jwt", "secevent+jwt"]) {
      await expectInvalidClient(token(assertionFields(await ec({}, { typ }))), /is not a client assertion/);
    }
    // The types an assertion may carry.
    for (const typ of ["JWT", "client-authentication+jwt"]) expect((await token(assertionFields(await ec({}, { typ })))).status, typ).toBe(200);
  });

  it("a malformed assertion, an unknown client; a wrong assertion type or two methods are invalid_request", async () => {
    await expectInvalidClient(token(assertionFields("not-a-jwt")), /not a JWT/);
    await expectInvalidClient(token(assertionFields(await signJwt(assertionClaims("nobody", idp.issuer), ecKey))), /unknown client/);
    const typed = await token({ client_assertion_type: "urn:example:other", client_assertion: await ec() });
    expect([typed.status, typed.body.error]).toEqual([400, "invalid_request"]);
    const both = await token(assertionFields(await ec()), { authorization: basicAuth("pkjwt-app", "x") });
    expect([both.status, both.body.error]).toEqual([400, "invalid_request"]);
  });

  it("at /introspect and /revoke as at /token, with their own URL as aud accepted", async () => {
    const introspect = await postForm(`${idp.base}/introspect`, { token: "x", ...assertionFields(await ec({ aud: `${idp.issuer}/introspect` })) });
    expect(introspect.status).toBe(200);
    expect(introspect.body).toEqual({ active: false });
    const revoke = await fetch(`${idp.base}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: "x", ...assertionFields(await ec({ aud: `${idp.issuer}/revoke` })) }),
    });
    expect(revoke.status).toBe(200);
    await revoke.arrayBuffer();
    await expectInvalidClient(postForm(`${idp.base}/revoke`, { token: "x", ...assertionFields(await ec({ exp: nowS() - 5, iat: nowS() - 60 })) }), /exp/);
    // The /introspect URL is not an audience of /revoke.
    await expectInvalidClient(postForm(`${idp.base}/revoke`, { token: "x", ...assertionFields(await ec({ aud: `${idp.issuer}/introspect` })) }), /aud/);
  });
});
