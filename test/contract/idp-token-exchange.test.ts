/**
 * OAuth 2.0 Token Exchange (RFC 8693) at /token: a confidential client exchanges an access token
 * or ID token of this issuer for an access token with another audience and a scope no wider than
 * the subject's, with `act` when an actor token is given. Bad input is a clear OAuth error with
 * no-store and stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import {
  advanceClock,
  ALICE_SUB,
  basicAuth,
  client,
  codeFlow,
  debugCounts,
  failOnServerErrors,
  getJson,
  type Idp,
  postForm,
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
    const { id } = await userTokens(idp.issuer);
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
