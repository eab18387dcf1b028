/**
 * Example: an OpenID Connect code flow against an in-process identity provider, with openid-client.
 * Run from the repository root: `npx vitest run examples/idp-vitest` (see README.md). It imports
 * the package by name, as your project would after `npm install <devservices tarball>`.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import * as client from "openid-client";
import { type StartedIdp, startIdp } from "devservices/idp/testing";

const REDIRECT_URI = "http://127.0.0.1:3000/callback"; // accepted by the builtin dev-client
let idp: StartedIdp;

beforeAll(async () => {
  idp = await startIdp({ users: [{ login: "carol", password: "pw", groups: ["admins"] }] });
});
afterAll(() => idp.stop());

test("carol signs in and the app gets her ID token and claims", async () => {
  // 1. The relying party discovers the provider (plain http on loopback is fine for tests).
  const config = await client.discovery(new URL(idp.issuer), "dev-client", undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const authUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: "openid email",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
  });

  // 2. The user submits the login form: POST /authorize with the request's parameters + credentials.
  const form = new URLSearchParams([...authUrl.searchParams, ["login", "carol"], ["password", "pw"]]);
  const login = await fetch(new URL("/authorize", idp.url), { method: "POST", body: form, redirect: "manual" });
  expect(login.status).toBe(302);
  const callback = new URL(login.headers.get("location")!);

  // 3. The app exchanges the code and reads the user.
  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
  const claims = tokens.claims()!;
  expect(claims.email).toBe("carol@example.test");
  expect(claims.groups).toEqual(["admins"]);
  const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  expect(info.sub).toBe(claims.sub);
});
