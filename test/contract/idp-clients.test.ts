/**
 * Identity provider: configuration that changes clients, users and keys, over HTTP on every
 * runtime: the `--client-id` merge rule (IDP_CLIENT_ID equal to a builtin, or a new client),
 * seeded users replacing builtin scenarios, configured signing keys that keep ID tokens valid
 * across a restart, and what else survives a restart on each runtime.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from "jose";
import {
  authRequest,
  client,
  codeFlow,
  failOnServerErrors,
  getAuthorize,
  getJson,
  type Idp,
  INSTANCES,
  interactiveLogin,
  loginCategories,
  quickPickLogins,
  rejection,
  rp,
  startIdp,
  startInstances,
  stateDatabase,
  WEB_APP_SECRET,
} from "./idp-helpers.ts";
import { currentRuntime, startService } from "../runtimes/service.ts";

const CONFIGURED_REDIRECT = "http://127.0.0.1:4000/cb";

failOnServerErrors();

describe("IDP_CLIENT_ID equal to a builtin (web-app): merged into it", () => {
  let idp: Idp;
  beforeAll(async () => {
    idp = await startIdp({
      IDP_CLIENT_ID: "web-app",
      IDP_CLIENT_SECRET: "a-configured-secret",
      IDP_REDIRECT_URIS: CONFIGURED_REDIRECT,
      // A seeded user with a builtin scenario's login replaces it (and takes its own category).
      IDP_USERS: JSON.stringify({ users: [{ login: "admin", roles: ["superuser"], category: "Seeded admins" }] }),
    });
  });
  afterAll(() => idp?.svc.stop());

  it("keeps its own secret: the configured one is refused, web-app-secret works", async () => {
    const wrong = await rp(idp.issuer, "web-app", client.ClientSecretPost("a-configured-secret"));
    const attempt = await authRequest(wrong, { redirectUri: CONFIGURED_REDIRECT });
    const { callback } = await interactiveLogin(attempt.url, "alice");
    expect(
      (await rejection(
        client.authorizationCodeGrant(wrong, callback, { pkceCodeVerifier: attempt.verifier, expectedState: attempt.state, expectedNonce: attempt.nonce }),
      )).error,
    ).toBe("invalid_client");

    const right = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    const { claims } = await codeFlow(right, { params: { redirect_uri: CONFIGURED_REDIRECT } });
    expect(claims.aud).toBe("web-app");
  });

  it("redirect URIs are the union: the configured one and the builtin's own", async () => {
    const config = await rp(idp.issuer, "web-app", client.ClientSecretBasic(WEB_APP_SECRET));
    for (const uri of [CONFIGURED_REDIRECT, "http://127.0.0.1:8080/callback"]) {
      const res = await getAuthorize((await authRequest(config, { redirectUri: uri })).url);
      expect(res.status, uri).toBe(200);
      await res.arrayBuffer();
    }
    // The default list was replaced by the configured one. (Its 127.0.0.1 URI would still match
    // the builtin's http://127.0.0.1:8080/callback on another port: RFC 8252 §7.3.)
    const res = await getAuthorize((await authRequest(config, { redirectUri: "http://localhost:3000/callback" })).url);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    await res.arrayBuffer();
  });

  it("the other builtins keep their rules: public-spa still requires PKCE", async () => {
    const spa = await rp(idp.issuer, "public-spa");
    const res = await getAuthorize((await authRequest(spa, { pkce: "none", redirectUri: CONFIGURED_REDIRECT })).url);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });

  it("a seeded user replaces the builtin scenario of the same login", async () => {
    const config = await rp(idp.issuer, "dev-client");
    const admin = await codeFlow(config, { login: "admin", params: { redirect_uri: CONFIGURED_REDIRECT } });
    expect(admin.claims.roles).toEqual(["superuser"]);
    expect(admin.claims.groups).toBeUndefined();
    const html = await (await getAuthorize((await authRequest(config, { redirectUri: CONFIGURED_REDIRECT })).url)).text();
    expect(loginCategories(html)).toContain("Seeded admins");
    expect(quickPickLogins(html).filter((l) => l === "admin")).toHaveLength(1);
  });
});

describe("IDP_CLIENT_ID matching no builtin: a new permissive client", () => {
  let idp: Idp;
  beforeAll(async () => {
    idp = await startIdp({ IDP_CLIENT_ID: "my-app", IDP_CLIENT_SECRET: "my-app-secret", IDP_REDIRECT_URIS: CONFIGURED_REDIRECT });
  });
  afterAll(() => idp?.svc.stop());

  it("confidential with the configured secret, PKCE optional, any scope, every grant", async () => {
    const config = await rp(idp.issuer, "my-app", client.ClientSecretBasic("my-app-secret"));
    const { claims, tokens } = await codeFlow(config, {
      pkce: "none",
      scope: "openid offline_access custom:scope",
      params: { redirect_uri: CONFIGURED_REDIRECT },
    });
    expect(claims.aud).toBe("my-app");
    expect(tokens.scope).toContain("custom:scope");
    expect(tokens.refresh_token).toBeTruthy();
    const service = await client.clientCredentialsGrant(config, { scope: "api" });
    expect(service.access_token).toBeTruthy();
    const wrong = await rp(idp.issuer, "my-app", client.ClientSecretBasic("nope"));
    expect((await rejection(client.clientCredentialsGrant(wrong, { scope: "api" }))).error).toBe("invalid_client");
  });

  it("may log out to both builtin origins", async () => {
    const config = await rp(idp.issuer, "my-app", client.ClientSecretBasic("my-app-secret"));
    for (const uri of ["http://localhost:3000", "http://localhost:8080"]) {
      const res = await fetch(client.buildEndSessionUrl(config, { post_logout_redirect_uri: uri, client_id: "my-app" }), { redirect: "manual" });
      expect(res.status, uri).toBe(302);
      expect(res.headers.get("location")).toBe(`${uri}/`);
      await res.arrayBuffer();
    }
  });
});

describe("configured signing keys (IDP_SIGNING_KEYS)", () => {
  it("are the ones /jwks publishes, so an ID token stays valid across a restart", async () => {
    const keys = await Promise.all(
      ["dev-key-1", "rotated-key-2", "bad-sig-key"].map(async (kid) => {
        const { privateKey } = await generateKeyPair("RS256", { extractable: true });
        return { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
      }),
    );
    const env = { IDP_SIGNING_KEYS: JSON.stringify({ keys }) };
    const first = await startIdp(env);
    let idToken: string;
    try {
      const published = (await getJson<{ keys: { kid: string; n: string; d?: string }[] }>(`${first.base}/jwks`)).body.keys;
      // The RS256 kids as configured; the other algorithms' keys are generated beside them.
      expect(published.filter((k) => keys.some((c) => c.kid === k.kid)).map((k) => [k.kid, k.n])).toEqual(keys.map((k) => [k.kid, k.n]));
      expect(published.some((k) => k.d !== undefined)).toBe(false);
      idToken = (await codeFlow(await rp(first.issuer))).tokens.id_token!;
      // Configured keys are not rotated by the provider: 409, and /jwks is unchanged.
      const rotate = await fetch(`${first.base}/debug/keys/rotate`, { method: "POST" });
      expect(rotate.status).toBe(409);
      expect(((await rotate.json()) as { error: string }).error).toBe("invalid_request");
      expect((await getJson<{ keys: { n?: string }[] }>(`${first.base}/jwks`)).body.keys.filter((k) => k.n !== undefined).map((k) => k.n)).toEqual(
        expect.arrayContaining(keys.map((k) => k.n)),
      );
    } finally {
      await first.svc.stop();
    }
    const second = await startIdp(env);
    try {
      const jwks = createLocalJWKSet((await getJson<{ keys: [] }>(`${second.base}/jwks`)).body);
      // The issuer follows the request origin, which changed with the port: check the signature.
      const { payload } = await jwtVerify(idToken, jwks, { audience: "dev-client" });
      expect(payload.sub).toBeTruthy();
    } finally {
      await second.svc.stop();
    }
  });
});

describe("state across a restart", () => {
  // workerd keeps codes, sessions, tokens and generated keys in the Durable Object's storage;
  // Node and Deno keep them in memory by default, and in the --state database when there is one
  // (docs/idp.md, "State and several instances"): in the pair projects both instances restart on theirs.
  const runtime = currentRuntime();
  const pair = INSTANCES > 1;
  const durable = runtime === "workerd" || pair;
  it(
    pair
      ? `${runtime}, two instances on one database: after both restart, refresh tokens, sessions and generated keys are still there`
      : durable
      ? "workerd: after a restart on the same storage, refresh tokens, sessions and generated keys are still there"
      : `${runtime}: a restart starts from empty state with new generated keys`,
    async () => {
      const persistTo = `.wrangler/test-state/idp-restart-${crypto.randomUUID()}`;
      const database = pair ? stateDatabase() : undefined;
      const start = async () => {
        const env = { IDP_ISSUER: "{origin}", IDP_SIGNING_KEYS: "" }; // generated keys, kept or new
        const svc = database ? await startInstances(env, INSTANCES, database.url) : await startService("idp", { env, persistTo });
        return { svc, base: svc.baseUrl, issuer: svc.baseUrl };
      };
      const first = await start();
      let flow: Awaited<ReturnType<typeof codeFlow>>;
      try {
        flow = await codeFlow(await rp(first.issuer), { scope: "openid offline_access" });
      } finally {
        await first.svc.stop();
      }
      const second = await start();
      try {
        const config = await rp(second.issuer);
        const jwks = createLocalJWKSet((await getJson<{ keys: [] }>(`${second.base}/jwks`)).body);
        const verify = () => jwtVerify(flow.tokens.id_token!, jwks, { audience: "dev-client" });
        const refresh = () => client.refreshTokenGrant(config, flow.tokens.refresh_token!);
        const silent = await getAuthorize((await authRequest(config, { params: { prompt: "none" } })).url, flow.cookie);
        const silentResult = new URL(silent.headers.get("location")!).searchParams;
        if (durable) {
          await expect(verify()).resolves.toBeTruthy();
          expect((await refresh()).access_token).toBeTruthy();
          expect(silentResult.get("code")).toBeTruthy();
        } else {
          await expect(verify()).rejects.toThrow(/signature/);
          expect((await rejection(refresh())).error).toBe("invalid_grant");
          expect(silentResult.get("error")).toBe("login_required");
        }
      } finally {
        await second.svc.stop();
        database?.cleanup();
      }
    },
  );
});
