/** Identity provider with a path-based issuer (`IDP_ISSUER={origin}/realms/dev`). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALICE_SUB, client, codeFlow, DEVICE_CODE_GRANT, failOnServerErrors, getJson, type Idp, postForm, rp, startIdp } from "./idp-helpers.ts";

const PREFIX = "/realms/dev";

let idp: Idp;

failOnServerErrors();
beforeAll(async () => {
  idp = await startIdp({}, PREFIX);
});
afterAll(() => idp?.svc.stop());

describe("path-based issuer", () => {
  it("discovery under the prefix advertises the issuer and prefixed endpoints", async () => {
    const res = await getJson<Record<string, string>>(`${idp.base}${PREFIX}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const d = res.body;
    expect(d.issuer).toBe(`${idp.base}${PREFIX}`);
    for (
      const [field, path] of [
        ["authorization_endpoint", "/authorize"],
        ["token_endpoint", "/token"],
        ["userinfo_endpoint", "/userinfo"],
        ["jwks_uri", "/jwks"],
        ["end_session_endpoint", "/end-session"],
        ["device_authorization_endpoint", "/device_authorization"],
      ] as const
    ) {
      expect(d[field], field).toBe(`${idp.base}${PREFIX}${path}`);
    }
  });

  it("a full code flow through openid-client works against the prefixed issuer", async () => {
    const config = await rp(idp.issuer);
    const { tokens, claims, callback } = await codeFlow(config);
    expect(callback.searchParams.get("iss")).toBe(idp.issuer);
    expect(claims.iss).toBe(idp.issuer);
    expect(claims.sub).toBe(ALICE_SUB);
    const info = await client.fetchUserInfo(config, tokens.access_token, ALICE_SUB);
    expect(info.email).toBe("alice@example.test");
  });

  it("the device grant advertises prefixed verification URIs and works", async () => {
    const started = await postForm(`${idp.issuer}/device_authorization`, { client_id: "dev-client", scope: "openid" });
    expect(started.status).toBe(200);
    expect(started.body.verification_uri).toBe(`${idp.issuer}/device`);
    const page = await fetch(started.body.verification_uri_complete as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/id="device-form"/);
    const approved = await fetch(`${idp.issuer}/device`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ user_code: started.body.user_code as string, action: "approve", login: "alice", password: "" }),
    });
    expect(approved.status).toBe(200);
    await approved.arrayBuffer();
    const config = await rp(idp.issuer);
    const tokens = await client.genericGrantRequest(config, DEVICE_CODE_GRANT, {
      device_code: started.body.device_code as string,
    });
    expect(tokens.claims()!.iss).toBe(idp.issuer);
  });

  it("the root paths also answer", async () => {
    const discovery = await getJson<Record<string, string>>(`${idp.base}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(discovery.body.issuer).toBe(idp.issuer);
    const jwks = await getJson<{ keys: unknown[] }>(`${idp.base}/jwks`);
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toHaveLength(9);
    const prefixedJwks = await getJson<{ keys: unknown[] }>(`${idp.issuer}/jwks`);
    expect(prefixedJwks.body).toEqual(jwks.body);
    const health = await fetch(`${idp.base}/healthz`);
    expect(await health.text()).toBe("ok");
    const userinfo = await fetch(`${idp.base}/userinfo`);
    expect(userinfo.status).toBe(401);
    await userinfo.arrayBuffer();
  });

  it("a served path asked with another method is 405 with Allow, under the prefix and at the root; others 404", async () => {
    for (const base of [idp.issuer, idp.base]) {
      const res = await fetch(`${base}/token`);
      expect(res.status, base).toBe(405);
      expect(res.headers.get("allow")).toBe("POST, OPTIONS");
      expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
      const jwks = await fetch(`${base}/jwks`, { method: "DELETE" });
      expect(jwks.status).toBe(405);
      expect(jwks.headers.get("allow")).toBe("GET, OPTIONS");
      await jwks.arrayBuffer();
    }
    // (`/nowhere/token` is the token endpoint of the issuer by path `/nowhere`: idp-issuers.test.ts.)
    for (const path of [`${PREFIX}/nowhere`, `${PREFIX}x/token`, "/nowhere/token/more", "/realms/other/token"]) {
      const res = await fetch(`${idp.base}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("x-request-id")).toBeTruthy();
      await res.arrayBuffer();
    }
  });
});
