/**
 * OAuth 2.0 Token Exchange (RFC 8693) at /token: a confidential client exchanges an access token
 * or ID token of this issuer for an access token with another audience and a scope no wider than
 * the subject's, with `act` when an actor token is given. Bad input is a clear OAuth error with
 * no-store and stores nothing. Nothing the provider signed is trusted in the wrong place or
 * without its binding: a DPoP-bound token needs a proof of its key and gives a bound
 * one, an ID token must be one and be the caller's, and what it gives ends with its session.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import {
  advanceClock,
  ALICE_SUB,
  authRequest,
  basicAuth,
  client,
  codeFlow,
  debugCounts,
  dpopProof,
  failOnServerErrors,
  getJson,
  type Idp,
  interactiveLogin,
  logoutReceiver,
  postForm,
  type ProofKey,
  proofKey,
  REDIRECT_URI,
  rejection,
  rp,
  startIdp,
  userinfo,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";

const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const AT = "urn:ietf:params:oauth:token-type:access_token";
const IDT = "urn:ietf:params:oauth:token-type:id_token";
const WEB_APP = { authorization: basicAuth("web-app", WEB_APP_SECRET) };

failOnServerErrors();

/** A user's tokens from a code flow by dev-client (openid email offline_access). */
async function userTokens(issuer: string) {
  const config = await rp(issuer);
  const { tokens } = await codeFlow(config, { scope: "openid email offline_access" });
  return { config, access: tokens.access_token, id: tokens.id_token! };
}

/** A login by web-app (confidential) in a fresh browser: its tokens (the ID token's aud is web-app) and the session cookie. */
async function webAppTokens(issuer: string, scope = "openid email") {
  const config = await rp(issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
  const { tokens, claims, cookie } = await codeFlow(config, { scope });
  return { access: tokens.access_token, id: tokens.id_token!, refresh: tokens.refresh_token, sid: claims.sid as string, cookie: cookie! };
}

function exchange(issuer: string, params: Record<string, string>, headers: Record<string, string> = WEB_APP) {
  return postForm(`${issuer}/token`, { grant_type: GRANT, ...params }, headers);
}

describe("token exchange (opaque access tokens)", () => {
  let idp: Idp;
  beforeAll(async () => {
    idp = await startIdp();
  });
  afterAll(() => idp?.svc.stop());

  it("discovery lists the grant", async () => {
    const d = await getJson<{ grant_types_supported: string[] }>(`${idp.issuer}/.well-known/openid-configuration`);
    expect(d.body.grant_types_supported).toContain(GRANT);
  });

  it("openid-client: web-app exchanges alice's access token for one with another audience and a narrower scope", async () => {
    const { access } = await userTokens(idp.issuer);
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const res = await client.genericGrantRequest(webApp, GRANT, {
      subject_token: access,
      subject_token_type: AT,
      audience: "orders-api",
      resource: "https://orders.example.test/v1",
      scope: "openid email",
    });
    expect(res.issued_token_type).toBe(AT);
    expect(res.token_type.toLowerCase()).toBe("bearer");
    expect(res.scope).toBe("openid email");
    expect(res.expires_in).toBeGreaterThan(3000);
    expect(res.refresh_token).toBeUndefined();
    expect(res.access_token).not.toBe(access);
    const intro = await postForm(`${idp.issuer}/introspect`, { token: res.access_token }, WEB_APP);
    expect(intro.body).toMatchObject({
      active: true,
      sub: ALICE_SUB,
      client_id: "web-app",
      scope: "openid email",
      username: "alice",
      aud: ["orders-api", "https://orders.example.test/v1"],
      iss: idp.issuer,
    });
    expect(intro.body.act).toBeUndefined();
    // It is alice's token: userinfo answers for her.
    const info = await userinfo(`${idp.issuer}/userinfo`, `Bearer ${res.access_token}`);
    expect(info.status).toBe(200);
    expect(info.body.sub).toBe(ALICE_SUB);
  });

  it("an actor token puts `act` on the new token (the actor's sub and client)", async () => {
    const { access } = await userTokens(idp.issuer);
    const cc = await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials" }, WEB_APP);
    const res = await exchange(idp.issuer, {
      subject_token: access,
      subject_token_type: AT,
      actor_token: cc.body.access_token as string,
      actor_token_type: AT,
      audience: "orders-api",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.body.issued_token_type).toBe(AT);
    const intro = await postForm(`${idp.issuer}/introspect`, { token: res.body.access_token as string }, WEB_APP);
    expect(intro.body.act).toEqual({ sub: "web-app", client_id: "web-app" });
    expect(intro.body.aud).toBe("orders-api");
    expect(intro.body.sub).toBe(ALICE_SUB);
  });

  it("an ID token as the subject: honored while the user's session lives, refused after logout", async () => {
    const { id } = await webAppTokens(idp.issuer);
    const ok = await exchange(idp.issuer, { subject_token: id, subject_token_type: IDT, audience: "orders-api", scope: "openid" });
    expect(ok.status).toBe(200);
    expect(ok.body.scope).toBe("openid");
    const intro = await postForm(`${idp.issuer}/introspect`, { token: ok.body.access_token as string }, WEB_APP);
    expect(intro.body).toMatchObject({ active: true, sub: ALICE_SUB, username: "alice" });
    // Logging alice out (every session of her subject) ends what her ID token can be exchanged for.
    await fetch(`${idp.issuer}/end-session?` + new URLSearchParams({ id_token_hint: id })).then((r) => r.text());
    const after = await exchange(idp.issuer, { subject_token: id, subject_token_type: IDT });
    expect(after.status).toBe(400);
    expect(after.body.error).toBe("invalid_grant");
  });

  it("openid-client sees the OAuth error of a refused exchange", async () => {
    const webApp = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const err = await rejection(client.genericGrantRequest(webApp, GRANT, { subject_token: "not-a-token", subject_token_type: AT }));
    expect(err.error).toBe("invalid_grant");
  });

  it("bad input: a clear OAuth error with no-store, and nothing stored", async () => {
    const { access, id } = await userTokens(idp.issuer);
    const foreign = await userTokens(`${idp.base}/tenant-x`);
    const before = await debugCounts(idp.base);
    const cases: [string, Record<string, string>, string, number, Record<string, string>?][] = [
      ["no subject_token", { subject_token_type: AT }, "invalid_request", 400],
      ["no subject_token_type", { subject_token: access }, "invalid_request", 400],
      ["a refresh token type", { subject_token: access, subject_token_type: "urn:ietf:params:oauth:token-type:refresh_token" }, "unsupported_token_type", 400],
      ["an unknown token type", { subject_token: access, subject_token_type: "urn:example:saml" }, "unsupported_token_type", 400],
      ["an unknown access token", { subject_token: "no-such-token", subject_token_type: AT }, "invalid_grant", 400],
      ["an access token as an ID token", { subject_token: access, subject_token_type: IDT }, "invalid_grant", 400],
      ["a tampered ID token", { subject_token: id.slice(0, -4) + "AAAA", subject_token_type: IDT }, "invalid_grant", 400],
      ["another issuer's access token", { subject_token: foreign.access, subject_token_type: AT }, "invalid_grant", 400],
      ["another issuer's ID token", { subject_token: foreign.id, subject_token_type: IDT }, "invalid_grant", 400],
      ["a scope wider than the subject's", { subject_token: access, subject_token_type: AT, scope: "openid profile" }, "invalid_scope", 400],
      ["a relative resource", { subject_token: access, subject_token_type: AT, resource: "/orders" }, "invalid_target", 400],
      ["a resource with a fragment", { subject_token: access, subject_token_type: AT, resource: "https://orders.example.test/#x" }, "invalid_target", 400],
      [
        "a refresh token asked for",
        { subject_token: access, subject_token_type: AT, requested_token_type: "urn:ietf:params:oauth:token-type:refresh_token" },
        "invalid_request",
        400,
      ],
      ["actor_token_type without actor_token", { subject_token: access, subject_token_type: AT, actor_token_type: AT }, "invalid_request", 400],
      ["actor_token without its type", { subject_token: access, subject_token_type: AT, actor_token: access }, "invalid_request", 400],
      ["an unknown actor token", { subject_token: access, subject_token_type: AT, actor_token: "nope", actor_token_type: AT }, "invalid_grant", 400],
      ["a public client", { subject_token: access, subject_token_type: AT, client_id: "dev-client" }, "unauthorized_client", 400, {}],
      ["a wrong client secret", { subject_token: access, subject_token_type: AT }, "invalid_client", 401, { authorization: basicAuth("web-app", "wrong") }],
    ];
    for (const [name, params, error, status, headers] of cases) {
      const res = await exchange(idp.issuer, params, headers ?? WEB_APP);
      expect(res.status, name).toBe(status);
      expect(res.body.error, name).toBe(error);
      expect(typeof res.body.error_description, name).toBe("string");
      expect(res.headers.get("cache-control"), name).toContain("no-store");
    }
    // A repeated parameter, as at every OAuth endpoint.
    const body = new URLSearchParams({ grant_type: GRANT, subject_token: access, subject_token_type: AT });
    body.append("audience", "a");
    body.append("audience", "b");
    const repeated = await fetch(`${idp.issuer}/token`, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", ...WEB_APP } });
    expect(repeated.status).toBe(400);
    expect(((await repeated.json()) as { error: string }).error).toBe("invalid_request");
    expect(await debugCounts(idp.base)).toEqual(before);
  });

  it("an expired subject token is refused; the exchanged token lives no longer than its subject", async () => {
    const { access } = await userTokens(idp.issuer);
    await advanceClock(idp.base, 3000);
    const res = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT });
    expect(res.status).toBe(200);
    expect(res.body.expires_in).toBeLessThanOrEqual(600);
    await advanceClock(idp.base, 700);
    const late = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT });
    expect(late.status).toBe(400);
    expect(late.body.error).toBe("invalid_grant");
    const intro = await postForm(`${idp.issuer}/introspect`, { token: res.body.access_token as string }, WEB_APP);
    expect(intro.body).toEqual({ active: false });
  });
});

describe("token exchange with JWT access tokens (IDP_ACCESS_TOKEN_FORMAT=jwt)", () => {
  let idp: Idp;
  beforeAll(async () => {
    idp = await startIdp({ IDP_ACCESS_TOKEN_FORMAT: "jwt" });
  });
  afterAll(() => idp?.svc.stop());

  it("the exchanged JWT has the audience asked for and the act claim", async () => {
    const { access } = await userTokens(idp.issuer);
    const cc = await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials" }, WEB_APP);
    const res = await exchange(idp.issuer, {
      subject_token: access,
      subject_token_type: AT,
      actor_token: cc.body.access_token as string,
      actor_token_type: AT,
      audience: "orders-api",
    });
    expect(res.status).toBe(200);
    const claims = decodeJwt(res.body.access_token as string);
    expect(claims).toMatchObject({ iss: idp.issuer, sub: ALICE_SUB, aud: "orders-api", client_id: "web-app", act: { sub: "web-app", client_id: "web-app" } });
  });
});

// ---------------------------------------------------------------------------------------------
// Bindings and token classes

/** Waits (polling, up to 10 s) for the logout token of session `sid`. */
async function logoutTokenFor(tokens: string[], sid: string): Promise<string> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const found = tokens.find((t) => decodeJwt(t).sid === sid);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no logout token for sid ${sid}`);
}

/** A DPoP proof of `key` for a token request at `issuer`. */
const tokenProof = (issuer: string, key: ProofKey) => dpopProof(key, { htm: "POST", htu: `${issuer}/token` });

/** alice's access token for dev-client, bound to `key` by the proof of its code grant (also returned). */
async function boundAccessToken(issuer: string, key: ProofKey): Promise<{ access: string; proof: string }> {
  const request = await authRequest(await rp(issuer), { scope: "openid email" });
  const { callback } = await interactiveLogin(request.url, "alice");
  const proof = await tokenProof(issuer, key);
  const res = await postForm(
    `${issuer}/token`,
    {
      grant_type: "authorization_code",
      code: callback.searchParams.get("code")!,
      redirect_uri: REDIRECT_URI,
      client_id: "dev-client",
      code_verifier: request.verifier!,
    },
    { dpop: proof },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.token_type).toBe("DPoP");
  return { access: res.body.access_token as string, proof };
}

function introspect(issuer: string, token: string) {
  return postForm(`${issuer}/introspect`, { token }, WEB_APP);
}

describe("token exchange keeps bindings and token classes apart", () => {
  let idp: Idp;
  let receiver: Awaited<ReturnType<typeof logoutReceiver>>;
  /** A second confidential client, to exchange tokens that were not issued to it. */
  const ORDERS_SVC = { authorization: basicAuth("orders-svc", "orders-svc-secret") };
  beforeAll(async () => {
    receiver = await logoutReceiver();
    idp = await startIdp({
      IDP_ACCESS_TOKEN_FORMAT: "jwt",
      IDP_CLIENT_ID: "orders-svc",
      IDP_CLIENT_SECRET: "orders-svc-secret",
      IDP_BACKCHANNEL_LOGOUT_URIS: JSON.stringify({ "web-app": receiver.url }),
    });
  });
  afterAll(async () => {
    await idp?.svc.stop();
    await receiver?.close();
  });

  describe("a DPoP-bound subject token (RFC 9449 §7.1)", () => {
    it("exchanged with no proof: invalid_grant, nothing issued", async () => {
      const { access } = await boundAccessToken(idp.issuer, await proofKey());
      const before = await debugCounts(idp.base);
      const res = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
      expect(res.headers.get("cache-control")).toContain("no-store");
      expect(await debugCounts(idp.base)).toEqual(before);
    });

    it("exchanged with a proof of another key: invalid_grant, nothing issued", async () => {
      const { access } = await boundAccessToken(idp.issuer, await proofKey());
      const before = await debugCounts(idp.base);
      const res = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT }, {
        ...WEB_APP,
        dpop: await tokenProof(idp.issuer, await proofKey()),
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
      expect((await debugCounts(idp.base)).tokens).toBe(before.tokens);
    });

    it("a replayed proof is refused (invalid_dpop_proof), whether it got the subject token or an exchange", async () => {
      const key = await proofKey();
      const { access, proof: codeProof } = await boundAccessToken(idp.issuer, key);
      const reused = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT }, { ...WEB_APP, dpop: codeProof });
      expect(reused.status).toBe(400);
      expect(reused.body.error).toBe("invalid_dpop_proof");
      const proof = await tokenProof(idp.issuer, key);
      const first = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT }, { ...WEB_APP, dpop: proof });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.token_type).toBe("DPoP");
      const before = await debugCounts(idp.base);
      const replayed = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT }, { ...WEB_APP, dpop: proof });
      expect(replayed.status).toBe(400);
      expect(replayed.body.error).toBe("invalid_dpop_proof");
      expect(await debugCounts(idp.base)).toEqual(before);
    });

    it("exchanged with a proof of its key: the new token is DPoP-bound to that key, refused as Bearer, accepted with a proof", async () => {
      const key = await proofKey();
      const { access } = await boundAccessToken(idp.issuer, key);
      const res = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT, audience: "orders-api" }, {
        ...WEB_APP,
        dpop: await tokenProof(idp.issuer, key),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.token_type).toBe("DPoP");
      const exchanged = res.body.access_token as string;
      expect(decodeJwt(exchanged)).toMatchObject({ cnf: { jkt: key.thumbprint }, aud: "orders-api", sub: ALICE_SUB });
      expect((await introspect(idp.issuer, exchanged)).body).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: key.thumbprint } });
      const url = `${idp.issuer}/userinfo`;
      expect((await userinfo(url, `Bearer ${exchanged}`)).status).toBe(401);
      const other = await userinfo(url, `DPoP ${exchanged}`, await dpopProof(await proofKey(), { htm: "GET", htu: url, accessToken: exchanged }));
      expect(other.status).toBe(401);
      const info = await userinfo(url, `DPoP ${exchanged}`, await dpopProof(key, { htm: "GET", htu: url, accessToken: exchanged }));
      expect(info.status, JSON.stringify(info.body)).toBe(200);
      expect(info.body.sub).toBe(ALICE_SUB);
    });

    it("an unbound subject token exchanged with a proof gives a token bound to the proof's key", async () => {
      const key = await proofKey();
      const { access } = await webAppTokens(idp.issuer);
      const res = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT }, { ...WEB_APP, dpop: await tokenProof(idp.issuer, key) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.token_type).toBe("DPoP");
      expect(decodeJwt(res.body.access_token as string).cnf).toEqual({ jkt: key.thumbprint });
      expect((await userinfo(`${idp.issuer}/userinfo`, `Bearer ${res.body.access_token as string}`)).status).toBe(401);
    });

    it("a DPoP-bound actor token needs a proof of its key too", async () => {
      const key = await proofKey();
      const cc = await postForm(`${idp.issuer}/token`, { grant_type: "client_credentials" }, { ...WEB_APP, dpop: await tokenProof(idp.issuer, key) });
      expect(cc.body.token_type).toBe("DPoP");
      const { access } = await webAppTokens(idp.issuer);
      const params = { subject_token: access, subject_token_type: AT, actor_token: cc.body.access_token as string, actor_token_type: AT };
      for (const dpop of [undefined, await tokenProof(idp.issuer, await proofKey())]) {
        const res = await exchange(idp.issuer, params, dpop === undefined ? WEB_APP : { ...WEB_APP, dpop });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe("invalid_grant");
      }
      const ok = await exchange(idp.issuer, params, { ...WEB_APP, dpop: await tokenProof(idp.issuer, key) });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.token_type).toBe("DPoP");
      expect(decodeJwt(ok.body.access_token as string)).toMatchObject({ cnf: { jkt: key.thumbprint }, act: { sub: "web-app", client_id: "web-app" } });
    });
  });

  describe("each class of signed JWT only where it belongs (RFC 8725 §3.11)", () => {
    it("a logout token is neither an ID token nor an access token", async () => {
      const ended = await webAppTokens(idp.issuer);
      await webAppTokens(idp.issuer); // alice stays signed in elsewhere
      const res = await fetch(`${idp.issuer}/end-session`, { headers: { cookie: ended.cookie } });
      expect(res.status).toBe(200);
      await res.text();
      const logoutToken = await logoutTokenFor(receiver.tokens, ended.sid);
      for (const type of [IDT, AT]) {
        const refused = await exchange(idp.issuer, { subject_token: logoutToken, subject_token_type: type });
        expect(refused.status, type).toBe(400);
        expect(refused.body.error, type).toBe("invalid_grant");
      }
      const asIdToken = await exchange(idp.issuer, { subject_token: logoutToken, subject_token_type: IDT });
      expect(asIdToken.body.error_description).toMatch(/typ/);
    });

    it("a JWT access token (at+jwt), its own or an exchanged one, is not an ID token", async () => {
      const { access } = await webAppTokens(idp.issuer);
      const exchanged = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT });
      for (const token of [access, exchanged.body.access_token as string]) {
        const res = await exchange(idp.issuer, { subject_token: token, subject_token_type: IDT });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe("invalid_grant");
        expect(res.body.error_description).toMatch(/typ/);
      }
    });

    it("an ID token is not an access token", async () => {
      const { id } = await webAppTokens(idp.issuer);
      const res = await exchange(idp.issuer, { subject_token: id, subject_token_type: AT });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
    });

    it("a JWT access token counts as an access token only while its record exists (revoked: refused)", async () => {
      const { access } = await webAppTokens(idp.issuer);
      expect((await exchange(idp.issuer, { subject_token: access, subject_token_type: AT })).status).toBe(200);
      const revoked = await postForm(`${idp.issuer}/revoke`, { token: access }, WEB_APP);
      expect(revoked.status).toBe(200);
      const res = await exchange(idp.issuer, { subject_token: access, subject_token_type: AT });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
    });
  });

  describe("an ID token as the subject", () => {
    it("only a client in its aud may exchange it", async () => {
      const { id } = await webAppTokens(idp.issuer);
      const other = await exchange(idp.issuer, { subject_token: id, subject_token_type: IDT }, ORDERS_SVC);
      expect(other.status).toBe(400);
      expect(other.body.error).toBe("invalid_grant");
      const devClients = (await userTokens(idp.issuer)).id;
      const notWebApps = await exchange(idp.issuer, { subject_token: devClients, subject_token_type: IDT });
      expect(notWebApps.status).toBe(400);
      expect(notWebApps.body.error).toBe("invalid_grant");
      const own = await exchange(idp.issuer, { subject_token: id, subject_token_type: IDT });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect(decodeJwt(own.body.access_token as string)).toMatchObject({ sub: ALICE_SUB, client_id: "web-app" });
    });

    it("what it gives ends with its session: inactive after RP-initiated logout, while another session's lives on", async () => {
      const ending = await webAppTokens(idp.issuer);
      const staying = await webAppTokens(idp.issuer);
      const fromEnding = await exchange(idp.issuer, { subject_token: ending.id, subject_token_type: IDT });
      expect(fromEnding.status, JSON.stringify(fromEnding.body)).toBe(200);
      const token = fromEnding.body.access_token as string;
      // Exchanged again, as an access token: still of that session.
      const chained = await exchange(idp.issuer, { subject_token: token, subject_token_type: AT, audience: "orders-api" });
      expect(chained.status).toBe(200);
      const fromStaying = await exchange(idp.issuer, { subject_token: staying.id, subject_token_type: IDT });
      expect(fromStaying.status).toBe(200);
      expect((await introspect(idp.issuer, token)).body.active).toBe(true);

      const logout = await fetch(`${idp.issuer}/end-session`, { headers: { cookie: ending.cookie } });
      expect(logout.status).toBe(200);
      await logout.text();
      expect((await introspect(idp.issuer, token)).body).toEqual({ active: false });
      expect((await introspect(idp.issuer, chained.body.access_token as string)).body).toEqual({ active: false });
      expect((await userinfo(`${idp.issuer}/userinfo`, `Bearer ${token}`)).status).toBe(401);
      // The ID token of the ended session is done, though alice has another session.
      const again = await exchange(idp.issuer, { subject_token: ending.id, subject_token_type: IDT });
      expect(again.status).toBe(400);
      expect(again.body.error).toBe("invalid_grant");
      expect((await introspect(idp.issuer, fromStaying.body.access_token as string)).body.active).toBe(true);
    });

    it("a replayed refresh token of its session revokes what it gave, and it cannot be exchanged again (RFC 9700 §4.14.2)", async () => {
      const login = await webAppTokens(idp.issuer, "openid email offline_access");
      const before = await exchange(idp.issuer, { subject_token: login.id, subject_token_type: IDT });
      expect(before.status, JSON.stringify(before.body)).toBe(200);
      const config = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
      const first = login.refresh!;
      const rotated = await client.refreshTokenGrant(config, first);
      const replay = await postForm(`${idp.issuer}/token`, { grant_type: "refresh_token", refresh_token: first }, WEB_APP);
      expect(replay.body.error).toBe("invalid_grant");
      expect((await introspect(idp.issuer, before.body.access_token as string)).body).toEqual({ active: false });
      // Neither the first ID token nor the one the rotation issued.
      for (const id of [login.id, rotated.id_token!]) {
        const again = await exchange(idp.issuer, { subject_token: id, subject_token_type: IDT });
        expect(again.status).toBe(400);
        expect(again.body.error).toBe("invalid_grant");
        expect(String(again.body.error_description)).toMatch(/reused/);
      }
    });

    it("as the actor, a session-bound token acts only for a subject of the same session", async () => {
      const login = await webAppTokens(idp.issuer);
      const other = await userTokens(idp.issuer);
      const refused = await exchange(idp.issuer, { subject_token: other.access, subject_token_type: AT, actor_token: login.id, actor_token_type: IDT });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe("invalid_request");
      const bound = await exchange(idp.issuer, { subject_token: login.id, subject_token_type: IDT });
      const boundActor = await exchange(idp.issuer, {
        subject_token: other.access,
        subject_token_type: AT,
        actor_token: bound.body.access_token as string,
        actor_token_type: AT,
      });
      expect(boundActor.status).toBe(400);
      // The same session on both sides: the result ends with it.
      const same = await exchange(idp.issuer, { subject_token: login.id, subject_token_type: IDT, actor_token: login.id, actor_token_type: IDT });
      expect(same.status, JSON.stringify(same.body)).toBe(200);
      const logout = await fetch(`${idp.issuer}/end-session`, { headers: { cookie: login.cookie } });
      await logout.text();
      expect((await introspect(idp.issuer, same.body.access_token as string)).body).toEqual({ active: false });
    });
  });
});
