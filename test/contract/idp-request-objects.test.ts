/**
 * Request objects (RFC 9101, OIDC Core §6): `request` by value at /authorize and inside a pushed
 * authorization request, signed with a key of the client's `jwks` (or HS256 with its secret);
 * unsigned only for a client that registered `request_object_signing_alg: none`. The object's
 * parameters replace the request's. Refusals go back to a valid outer redirect URI as
 * `invalid_request_object` (else a 400 page); a `request_uri` other than /par's is
 * `request_uri_not_supported`. openid-client's JAR drives the positive path.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertionClaims, assertionFields, nowS, signJwt, type TestKey, testKey, unsignedJwt } from "./idp-jwt-helpers.ts";
import {
  basicAuth,
  client,
  debugCounts,
  failOnServerErrors,
  getAuthorize,
  getJson,
  type Idp,
  interactiveLogin,
  postForm,
  redeem,
  REDIRECT_URI,
  rp,
  startIdp,
} from "./idp-helpers.ts";

failOnServerErrors();

const HS_SECRET = "request-object-hmac-secret-0123456789abcdef";
let idp: Idp;
let ecKey: TestKey;

beforeAll(async () => {
  ecKey = await testKey("ES256");
  const clients = [
    { client_id: "jar-app", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [ecKey.publicJwk] } },
    { client_id: "jar-none", redirect_uris: [REDIRECT_URI], request_object_signing_alg: "none" },
    { client_id: "jar-hs", client_secret: HS_SECRET, redirect_uris: [REDIRECT_URI], request_object_signing_alg: "HS256" },
  ];
  idp = await startIdp({ IDP_CLIENTS: JSON.stringify(clients) });
});
afterAll(() => idp?.svc.stop());

/** The parameters of a plain code request (no PKCE), and a request object of them. */
function requestClaims(clientId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: clientId,
    aud: idp.issuer,
    client_id: clientId,
    response_type: "code",
    redirect_uri: REDIRECT_URI,
    scope: "openid email",
    state: "inner-state",
    nonce: "inner-nonce",
    exp: nowS() + 300,
    ...overrides,
  };
}

function authorizeUrl(params: Record<string, string>): URL {
  const url = new URL(`${idp.issuer}/authorize`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url;
}

/** A refusal sent back to the redirect URI: its error, description and state. */
async function redirectedError(url: URL): Promise<{ error: string | null; description: string | null; state: string | null }> {
  const res = await getAuthorize(url);
  await res.arrayBuffer();
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  expect(location.origin + location.pathname).toBe(REDIRECT_URI);
  return { error: location.searchParams.get("error"), description: location.searchParams.get("error_description"), state: location.searchParams.get("state") };
}

describe("discovery", () => {
  it("says request objects are supported, with their algorithms", async () => {
    const { body } = await getJson<Record<string, unknown>>(`${idp.base}/.well-known/openid-configuration`);
    expect(body.request_parameter_supported).toBe(true);
    expect(body.request_object_signing_alg_values_supported).toEqual(expect.arrayContaining(["RS256", "PS256", "ES256", "EdDSA", "HS256", "none"]));
  });
});

describe("accepted", () => {
  it("openid-client JAR (ES256 with the client's jwks key) signs in, the code is redeemed with private_key_jwt", async () => {
    const config = await rp(idp.issuer, "jar-app", client.PrivateKeyJwt(ecKey.privateKey));
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = await client.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: REDIRECT_URI,
        scope: "openid email",
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
      },
      ecKey.privateKey,
    );
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request"]);
    const login = await interactiveLogin(url, "alice");
    const tokens = await redeem(config, login.callback, { url, state, nonce, verifier });
    expect(tokens.claims()!.nonce).toBe(nonce);
  });

  it("the object's parameters replace the request's", async () => {
    const request = await signJwt(requestClaims("jar-app"), ecKey);
    const url = authorizeUrl({ client_id: "jar-app", request, state: "outer-state", scope: "openid", redirect_uri: "http://elsewhere.example.test/cb" });
    const { callback } = await interactiveLogin(url, "alice");
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("state")).toBe("inner-state");
    expect(callback.searchParams.get("code")).toBeTruthy();
  });

  it("unsigned for a client that registered request_object_signing_alg none; HS256 with the secret for one that registered it", async () => {
    const unsigned = await interactiveLogin(authorizeUrl({ client_id: "jar-none", request: unsignedJwt(requestClaims("jar-none")) }), "alice");
    expect(unsigned.callback.searchParams.get("code")).toBeTruthy();
    const hs = await signJwt(requestClaims("jar-hs"), { alg: "HS256", secret: HS_SECRET });
    const hmac = await interactiveLogin(authorizeUrl({ client_id: "jar-hs", request: hs }), "alice");
    expect(hmac.callback.searchParams.get("code")).toBeTruthy();
  });

  it("inside a pushed authorization request", async () => {
    const request = await signJwt(requestClaims("jar-app"), ecKey);
    const assertion = await signJwt(assertionClaims("jar-app", idp.issuer), ecKey);
    const pushed = await postForm(`${idp.base}/par`, { client_id: "jar-app", request, ...assertionFields(assertion) });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
    const { callback } = await interactiveLogin(authorizeUrl({ client_id: "jar-app", request_uri: String(pushed.body.request_uri) }), "alice");
    expect(callback.searchParams.get("state")).toBe("inner-state");
    const bad = await postForm(`${idp.base}/par`, { client_id: "jar-hs", request: unsignedJwt(requestClaims("jar-hs")) }, {
      authorization: basicAuth("jar-hs", HS_SECRET),
    });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_request_object"]);
  });
});

describe("refused: invalid_request_object to the redirect URI, nothing stored", () => {
  const outer = { redirect_uri: REDIRECT_URI, state: "outer-state", response_type: "code", scope: "openid" };

  it.each([
    ["unsigned, for a client that did not register none", async () => unsignedJwt(requestClaims("jar-app")), /unsigned/],
    ["signed by another key", async () => signJwt(requestClaims("jar-app"), await testKey("ES256", ecKey.kid)), /signature/],
    ["iss other than the client", async () => signJwt(requestClaims("jar-app", { iss: "someone-else" }), ecKey), /iss/],
    ["aud other than the issuer", async () => signJwt(requestClaims("jar-app", { aud: "https://other.example.test" }), ecKey), /aud/],
    ["expired", async () => signJwt(requestClaims("jar-app", { exp: nowS() - 10 }), ecKey), /exp/],
    ["nbf ahead", async () => signJwt(requestClaims("jar-app", { nbf: nowS() + 600 }), ecKey), /nbf/],
    ["client_id other than the request's", async () => signJwt(requestClaims("jar-app", { client_id: "dev-client" }), ecKey), /client_id/],
    ["not a JWT", async () => "not-a-jwt", /not a JWT/],
  ])("%s", async (_name, make, description) => {
    const before = await debugCounts(idp.base);
    const refused = await redirectedError(authorizeUrl({ client_id: "jar-app", request: await make(), ...outer }));
    expect(refused.error).toBe("invalid_request_object");
    expect(refused.description).toMatch(description);
    expect(refused.state).toBe("outer-state");
    const after = await debugCounts(idp.base);
    expect([after.codes, after.sessions]).toEqual([before.codes, before.sessions]);
  });

  it("an alg other than the registered one (ES256 for an HS256 client), or signed for none", async () => {
    const es = await redirectedError(authorizeUrl({ client_id: "jar-hs", request: await signJwt(requestClaims("jar-hs"), ecKey), ...outer }));
    expect([es.error, es.description]).toEqual(["invalid_request_object", expect.stringMatching(/alg ES256/)]);
    const signed = await redirectedError(authorizeUrl({ client_id: "jar-none", request: await signJwt(requestClaims("jar-none"), ecKey), ...outer }));
    expect(signed.error).toBe("invalid_request_object");
  });

  it("without a valid outer redirect URI: a 400 page", async () => {
    const res = await getAuthorize(authorizeUrl({ client_id: "jar-app", request: unsignedJwt(requestClaims("jar-app")) }));
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/invalid_request_object/);
  });

  it("a parameter nested too deeply to serialize: invalid_request_object, not a server error", async () => {
    const depth = 90_000;
    const claims = JSON.stringify(requestClaims("jar-none")).slice(0, -1) + `,"claims":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`;
    const request = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(claims).toString("base64url")}.`;
    const pushed = await postForm(`${idp.base}/par`, { client_id: "jar-none", request });
    // Where the runtime's stack serializes it (Deno, workerd), the claims parameter's size limit refuses it.
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(400);
    expect(pushed.body.error_description).toMatch(/claims is nested too deeply|claims is longer than/);
  });

  it("a request_uri other than the pushed authorization request endpoint's: request_uri_not_supported", async () => {
    const refused = await redirectedError(authorizeUrl({ client_id: "jar-app", request_uri: "https://client.example.test/request.jwt", ...outer }));
    expect(refused.error).toBe("request_uri_not_supported");
  });
});
