/**
 * The bearer authenticator against our identity provider, started in-process: JWT access tokens
 * (client_credentials), opaque ones through introspection, DPoP-bound ones with their proof.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedIdp, startIdp } from "../../idp/testing.ts";
import type { RoutePlan } from "../core/plan.ts";
import type { ScriptRequest } from "../core/request.ts";
import { AuthenticationError, type Authenticator } from "../core/services.ts";
import { createBearerAuthenticator } from "./bearer.ts";

const CLIENT = { client_id: "api-client", client_secret: "api-secret", redirect_uris: ["http://localhost/cb"] };
const ROUTE = { method: "GET", pattern: "/x", name: "GET /x", public: false, resources: [], csrf: false } as RoutePlan;

function pipe(headers: Record<string, string>, url = "http://routes.test/x", method = "GET") {
  const request = new Request(url, { method, headers });
  return { request, script: {} as ScriptRequest, route: ROUTE, requestId: "r" };
}

async function token(
  idp: StartedIdp,
  extra: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<{ access_token: string; token_type: string }> {
  const res = await fetch(`${idp.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: CLIENT.client_id,
      client_secret: CLIENT.client_secret,
      scope: "notes:read",
      ...extra,
    }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; token_type: string };
}

async function rejection(auth: Authenticator, headers: Record<string, string>, url?: string): Promise<AuthenticationError> {
  const err = await Promise.resolve(auth.authenticate(pipe(headers, url))).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(AuthenticationError);
  return err as AuthenticationError;
}

describe("JWT access tokens", () => {
  let idp: StartedIdp;
  let auth: Authenticator;
  beforeAll(async () => {
    idp = await startIdp({ clients: [CLIENT], accessTokenFormat: "jwt", accessTokenAudience: "routes-api" });
    auth = createBearerAuthenticator({ issuer: idp.issuer, audience: "routes-api" });
  });
  afterAll(() => idp.stop());

  it("passes a client_credentials token from the identity provider, as the client", async () => {
    const { access_token } = await token(idp);
    expect(access_token.split(".")).toHaveLength(3);
    const actor = await auth.authenticate(pipe({ authorization: `Bearer ${access_token}` }));
    expect(actor).toMatchObject({ id: "api-client", kind: "client", claims: { scope: "notes:read", aud: "routes-api", iss: idp.issuer } });
  });

  it("returns null without credentials, and refuses a malformed header", async () => {
    expect(await auth.authenticate(pipe({}))).toBeNull();
    expect((await rejection(auth, { authorization: "Basic abc" })).code).toBe("invalid_request");
  });

  it("refuses an expired token", async () => {
    const { access_token } = await token(idp);
    const later = createBearerAuthenticator({ issuer: idp.issuer, audience: "routes-api", now: () => Date.now() + 2 * 3600_000 });
    expect((await rejection(later, { authorization: `Bearer ${access_token}` })).message).toBe("the token has expired");
  });

  it("refuses a token signed by another key, or tampered with", async () => {
    const { access_token } = await token(idp);
    const [header, payload] = access_token.split(".");
    const { privateKey } = await generateKeyPair("RS256");
    const claims = JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")));
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "dev-key-1", typ: "at+jwt" }).sign(privateKey);
    expect((await rejection(auth, { authorization: `Bearer ${forged}` })).message).toBe("the token's signature does not verify");
    const tampered = `${header}.${btoa(JSON.stringify({ ...claims, scope: "admin" })).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_")}.${
      access_token.split(".")[2]
    }`;
    expect((await rejection(auth, { authorization: `Bearer ${tampered}` })).message).toBe("the token's signature does not verify");
  });

  it("refuses a token for another audience", async () => {
    const other = createBearerAuthenticator({ issuer: idp.issuer, audience: "billing-api" });
    const { access_token } = await token(idp);
    expect((await rejection(other, { authorization: `Bearer ${access_token}` })).message).toMatch(/^the token was not issued for this host/);
  });

  it("refuses a JWT of the issuer that is not an access token (an ID token has no typ at+jwt)", async () => {
    const { access_token } = await token(idp);
    const [, payload] = access_token.split(".");
    const claims = JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")));
    // Signed by a key the issuer publishes, all claims right, but typed as an ID token would be.
    const keyed = await generateKeyPair("RS256");
    const issuer = "http://typed-issuer.test";
    const fakeFetch =
      (async (input: RequestInfo | URL) =>
        String(input).endsWith("/.well-known/openid-configuration")
          ? Response.json({ issuer, jwks_uri: `${issuer}/jwks` })
          : Response.json({ keys: [{ ...(await exportJWK(keyed.publicKey)), kid: "k", alg: "RS256" }] })) as typeof fetch;
    const typed = createBearerAuthenticator({ issuer, audience: "routes-api", fetch: fakeFetch });
    const sign = (typ?: string) =>
      new SignJWT({ ...claims, iss: issuer }).setProtectedHeader({ alg: "RS256", kid: "k", ...(typ ? { typ } : {}) }).sign(keyed.privateKey);
    expect(await typed.authenticate(pipe({ authorization: `Bearer ${await sign("at+jwt")}` }))).toMatchObject({ id: "api-client" });
    expect(await typed.authenticate(pipe({ authorization: `Bearer ${await sign("application/at+jwt")}` }))).toMatchObject({ id: "api-client" });
    for (const typ of ["JWT", undefined]) {
      expect((await rejection(typed, { authorization: `Bearer ${await sign(typ)}` })).message).toBe("the token is not an access token (typ must be at+jwt)");
    }
  });

  it("needs an audience, and takes * for any", async () => {
    expect(() => createBearerAuthenticator({ issuer: idp.issuer, audience: [] })).toThrow(/an audience is required/);
    const any = createBearerAuthenticator({ issuer: idp.issuer, audience: "*" });
    const { access_token } = await token(idp);
    expect(await any.authenticate(pipe({ authorization: `Bearer ${access_token}` }))).toMatchObject({ id: "api-client" });
    const listed = createBearerAuthenticator({ issuer: idp.issuer, audience: ["billing-api", "routes-api"] });
    expect(await listed.authenticate(pipe({ authorization: `Bearer ${access_token}` }))).toMatchObject({ id: "api-client" });
  });

  it("follows key rotation: a token signed by a key it has not seen makes it fetch the key set again", async () => {
    const issuer = "http://rotating-issuer.test";
    const first = await generateKeyPair("RS256");
    const second = await generateKeyPair("RS256");
    const keys = [{ ...(await exportJWK(first.publicKey)), kid: "k1", alg: "RS256" }];
    let jwksFetches = 0;
    const fakeFetch = (async (input: RequestInfo | URL) => {
      const url = String(input);
      if (url.endsWith("/.well-known/openid-configuration")) return Response.json({ issuer, jwks_uri: `${issuer}/jwks` });
      jwksFetches++;
      return Response.json({ keys });
    }) as typeof fetch;
    const rotating = createBearerAuthenticator({ issuer, audience: "*", fetch: fakeFetch, jwksCooldownMs: 0 });
    const sign = (key: CryptoKey, kid: string) =>
      new SignJWT({ sub: "svc", client_id: "svc" }).setProtectedHeader({ alg: "RS256", kid, typ: "at+jwt" }).setIssuer(issuer).setIssuedAt().setExpirationTime(
        "5m",
      ).sign(key);
    expect(await rotating.authenticate(pipe({ authorization: `Bearer ${await sign(first.privateKey, "k1")}` }))).toMatchObject({ id: "svc" });
    expect((await rejection(rotating, { authorization: `Bearer ${await sign(second.privateKey, "k2")}` })).message).toBe(
      "the token's signature does not verify",
    );
    keys.push({ ...(await exportJWK(second.publicKey)), kid: "k2", alg: "RS256" });
    expect(await rotating.authenticate(pipe({ authorization: `Bearer ${await sign(second.privateKey, "k2")}` }))).toMatchObject({ id: "svc" });
    expect(jwksFetches).toBe(3);
  });
});

describe("opaque tokens and DPoP", () => {
  let idp: StartedIdp;
  beforeAll(async () => {
    idp = await startIdp({ clients: [CLIENT] });
  });
  afterAll(() => idp.stop());

  it("checks an opaque token at the introspection endpoint, and refuses a revoked one", async () => {
    const auth = createBearerAuthenticator({
      issuer: idp.issuer,
      audience: CLIENT.client_id,
      introspection: { clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret },
      introspectionCacheMs: 0,
    });
    const { access_token } = await token(idp);
    expect(access_token.split(".")).toHaveLength(1);
    expect(await auth.authenticate(pipe({ authorization: `Bearer ${access_token}` }))).toMatchObject({ id: "api-client", kind: "client" });
    await fetch(`${idp.url}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: access_token, client_id: CLIENT.client_id, client_secret: CLIENT.client_secret }),
    });
    expect((await rejection(auth, { authorization: `Bearer ${access_token}` })).message).toBe("the token is not active");
    // Introspection answers are cached: the audience must hold on the second use too.
    const elsewhere = createBearerAuthenticator({
      issuer: idp.issuer,
      audience: "some-other-client",
      introspection: { clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret },
    });
    const { access_token: fresh } = await token(idp);
    expect((await rejection(elsewhere, { authorization: `Bearer ${fresh}` })).message).toBe("the token was not issued for this host (aud)");
    expect((await rejection(elsewhere, { authorization: `Bearer ${fresh}` })).message).toBe("the token is not active, or not issued for this host");
    const noIntrospection = createBearerAuthenticator({ issuer: idp.issuer, audience: "*" });
    expect((await rejection(noIntrospection, { authorization: `Bearer ${access_token}` })).message).toContain("no introspection configured");
  });

  it("needs the DPoP scheme and a fresh proof by the bound key for a DPoP-bound token", async () => {
    const auth = createBearerAuthenticator({
      issuer: idp.issuer,
      audience: CLIENT.client_id,
      introspection: { clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret },
    });
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    const jwk = await exportJWK(publicKey);
    const proof = (htm: string, htu: string, claims: Record<string, unknown> = {}, key = privateKey, pub = jwk) =>
      new SignJWT({ jti: crypto.randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000), ...claims }).setProtectedHeader({
        alg: "ES256",
        typ: "dpop+jwt",
        jwk: pub,
      }).sign(key);
    const { access_token, token_type } = await token(idp, {}, { dpop: await proof("POST", `${idp.url}/token`) });
    expect(token_type).toBe("DPoP");
    const ath = btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(access_token))))).replace(/=+$/, "")
      .replace(/\+/g, "-").replace(/\//g, "_");
    const url = "http://routes.test/x";
    const good = await proof("GET", url, { ath });
    expect(await auth.authenticate(pipe({ authorization: `DPoP ${access_token}`, dpop: good }, url))).toMatchObject({
      id: "api-client",
      claims: { cnf: { jkt: await calculateJwkThumbprint(jwk) } },
    });
    expect((await rejection(auth, { authorization: `DPoP ${access_token}`, dpop: good }, url)).message).toBe("the DPoP proof was used before");
    expect((await rejection(auth, { authorization: `Bearer ${access_token}` }, url)).message).toBe("a DPoP-bound token must be sent with the DPoP scheme");
    expect((await rejection(auth, { authorization: `DPoP ${access_token}` }, url)).message).toBe("a DPoP-bound token needs a DPoP proof");
    expect((await rejection(auth, { authorization: `DPoP ${access_token}`, dpop: await proof("POST", url, { ath }) }, url)).message).toBe(
      "DPoP proof htm does not match the request method",
    );
    expect((await rejection(auth, { authorization: `DPoP ${access_token}`, dpop: await proof("GET", "http://elsewhere.test/x", { ath }) }, url)).message).toBe(
      "DPoP proof htu does not match the request URL",
    );
    expect((await rejection(auth, { authorization: `DPoP ${access_token}`, dpop: await proof("GET", url, { ath: "wrong" }) }, url)).message).toBe(
      "DPoP proof ath does not match the access token",
    );
    expect(
      (await rejection(auth, { authorization: `DPoP ${access_token}`, dpop: await proof("GET", url, { ath, iat: Math.floor(Date.now() / 1000) - 3600 }) }, url))
        .message,
    ).toBe("DPoP proof iat is not fresh");
    const other = await generateKeyPair("ES256");
    const otherJwk = await exportJWK(other.publicKey);
    expect((await rejection(auth, { authorization: `DPoP ${access_token}`, dpop: await proof("GET", url, { ath }, other.privateKey, otherJwk) }, url)).message)
      .toBe(
        "the DPoP proof is signed by a key the token is not bound to",
      );
  });
});
