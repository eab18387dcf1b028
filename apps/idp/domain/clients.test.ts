import { describe, expect, it } from "vitest";
import {
  authenticateClient,
  authMethodsOf,
  buildClients,
  clientFromConfig,
  JWT_BEARER_ASSERTION_TYPE,
  loopbackKey,
  parseClientConfigs,
  postLogoutUriAllowed,
  readClientCredentials,
  redirectUriAllowed,
  WEB_APP_SECRET,
} from "./clients.ts";
import { ClientConfigError, OAuthError } from "./errors.ts";
import { constantTimeEqual } from "./random.ts";

const form = (o: Record<string, string>) => new Map(Object.entries(o));
const basic = (id: string, secret: string) => "Basic " + btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`);

describe("buildClients", () => {
  it("has the three builtins with their rules", () => {
    const clients = buildClients({});
    expect(clients.get("dev-client")).toMatchObject({ require_pkce: false });
    expect(clients.get("dev-client")!.secret).toBeUndefined();
    expect(clients.get("public-spa")).toMatchObject({ require_pkce: true });
    expect(clients.get("public-spa")!.secret).toBeUndefined();
    expect(clients.get("web-app")).toMatchObject({ require_pkce: false, secret: WEB_APP_SECRET });
    expect([...clients.get("public-spa")!.redirect_uris]).toContain("http://localhost:8080/callback");
    expect([...clients.get("dev-client")!.redirect_uris]).not.toContain("http://localhost:8080/callback");
    expect([...clients.get("dev-client")!.post_logout_redirect_uris]).toContain("http://localhost:3000");
  });
  it("merges a configured builtin id: class properties kept, redirect URIs unioned", () => {
    const clients = buildClients({ clientId: "public-spa", clientSecret: "ignored", redirectUris: ["http://app.test/cb"] });
    const spa = clients.get("public-spa")!;
    expect(spa.require_pkce).toBe(true);
    expect(spa.secret).toBeUndefined();
    expect(spa.redirect_uris.has("http://app.test/cb")).toBe(true);
    expect(spa.redirect_uris.has("http://localhost:8080/callback")).toBe(true);
  });
  it("accepts the origins of configured redirect URIs as post-logout URIs, and only those", () => {
    const clients = buildClients({ clientId: "my-app", redirectUris: ["http://127.0.0.1:41234/auth/callback"] });
    for (const id of ["my-app", "public-spa", "web-app", "dev-client"]) {
      expect(clients.get(id)!.post_logout_redirect_uris.has("http://127.0.0.1:41234"), id).toBe(true);
      expect(clients.get(id)!.post_logout_redirect_uris.has("http://127.0.0.1:41235"), id).toBe(false);
    }
    expect(buildClients({}).get("public-spa")!.post_logout_redirect_uris.has("http://localhost:3000")).toBe(false);
  });
  it("registers any other id as a permissive client, confidential with a secret", () => {
    const clients = buildClients({ clientId: "my-app", clientSecret: "s3", redirectUris: ["http://app.test/cb"] });
    expect(clients.get("my-app")).toMatchObject({ secret: "s3", require_pkce: false });
    expect(clients.get("my-app")!.allowed_scopes).toBeUndefined();
    expect(clients.size).toBe(4);
  });
});

describe("redirect URI matching", () => {
  it("a loopback IP literal's URI without its port; nothing for any other URI (RFC 8252 §7.3, §8.3)", () => {
    expect(loopbackKey("http://127.0.0.1:8080/callback")).toBe("http://127.0.0.1/callback");
    expect(loopbackKey("http://127.0.0.1/callback")).toBe("http://127.0.0.1/callback");
    expect(loopbackKey("https://[::1]:65535/cb?x=1")).toBe("https://[::1]/cb?x=1");
    expect(loopbackKey("http://127.0.0.1:4000")).toBe("http://127.0.0.1");
    for (
      const other of [
        "http://localhost:8080/callback",
        "http://127.0.0.1:65536/callback",
        "http://127.0.0.1:8080/cb#f",
        "http://127.0.0.1:8080@evil.test/cb",
        "http://127.0.0.1.evil.test/cb",
        "http://127.0.0.2:8080/cb",
        "HTTP://127.0.0.1:8080/cb",
        "ftp://127.0.0.1:21/cb",
      ]
    ) {
      expect(loopbackKey(other), other).toBeUndefined();
    }
  });
  it("exact, or a registered loopback URI on any port with the same scheme, host, path and query", () => {
    const spa = buildClients({}).get("public-spa")!;
    expect(redirectUriAllowed(spa, "http://localhost:8080/callback")).toBe(true);
    expect(redirectUriAllowed(spa, "http://127.0.0.1:8090/auth/callback")).toBe(true);
    expect(redirectUriAllowed(spa, "http://127.0.0.1/callback")).toBe(true);
    expect(redirectUriAllowed(spa, "http://localhost:8090/auth/callback")).toBe(false);
    expect(redirectUriAllowed(spa, "http://127.0.0.1:8090/auth/callback/")).toBe(false);
    expect(redirectUriAllowed(spa, "https://127.0.0.1:8090/auth/callback")).toBe(false);
    expect(redirectUriAllowed(spa, "http://[::1]:8090/auth/callback")).toBe(false);
  });
  it("post-logout URIs: the configured client's own list, with the same loopback rule", () => {
    const clients = buildClients({
      clientId: "my-spa",
      redirectUris: ["http://localhost:4000/callback"],
      postLogoutRedirectUris: ["http://localhost:4000/index.html"],
    });
    const mine = clients.get("my-spa")!;
    expect(postLogoutUriAllowed(mine, "http://localhost:4000/index.html")).toBe(true);
    expect(postLogoutUriAllowed(mine, "http://localhost:4000")).toBe(true);
    expect(postLogoutUriAllowed(mine, "http://localhost:4000/")).toBe(false);
    expect(postLogoutUriAllowed(clients.get("dev-client")!, "http://localhost:4000/index.html")).toBe(false);
    expect(postLogoutUriAllowed(mine, "http://127.0.0.1:9999")).toBe(true); // its builtin :3000 and :8080 ones
    // Equal to a builtin id: added to the builtin.
    const merged = buildClients({ clientId: "public-spa", postLogoutRedirectUris: ["http://localhost:4000/bye"] });
    expect(postLogoutUriAllowed(merged.get("public-spa")!, "http://localhost:4000/bye")).toBe(true);
    expect(postLogoutUriAllowed(merged.get("web-app")!, "http://localhost:4000/bye")).toBe(false);
  });
});

describe("client authentication", () => {
  const clients = buildClients({});
  const auth = (header: string | undefined, body: Record<string, string>) => authenticateClient(clients, readClientCredentials(header, form(body)));
  it("accepts basic, post and none for the right clients", () => {
    expect(auth(basic("web-app", WEB_APP_SECRET), {}).client_id).toBe("web-app");
    expect(auth(undefined, { client_id: "web-app", client_secret: WEB_APP_SECRET }).client_id).toBe("web-app");
    expect(auth(undefined, { client_id: "dev-client" }).client_id).toBe("dev-client");
  });
  it("refuses unknown clients and wrong or missing secrets with 401 invalid_client", () => {
    for (
      const [h, b] of [
        [undefined, { client_id: "nobody" }],
        [basic("web-app", "nope"), {}],
        [undefined, { client_id: "web-app", client_secret: "nope" }],
        [undefined, { client_id: "web-app" }],
        ["Basic !!!", {}],
      ] as const
    ) {
      try {
        auth(h, b);
        throw new Error("expected failure");
      } catch (err) {
        expect(err).toBeInstanceOf(OAuthError);
        expect((err as OAuthError).status).toBe(401);
        expect((err as OAuthError).error).toBe("invalid_client");
      }
    }
  });
  it("refuses two methods at once", () => {
    expect(() => auth(basic("web-app", WEB_APP_SECRET), { client_secret: WEB_APP_SECRET })).toThrow(/only one/);
  });
  it("compares secrets fully", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abd")).toBe(false);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
  });
});

describe("JWT client metadata", () => {
  const jwks = { keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y" }] };
  const app = { client_id: "app", redirect_uris: ["http://localhost/cb"] };

  it("parseClientConfigs takes the RFC 7591 names and refuses what cannot work", () => {
    const [parsed] = parseClientConfigs([{ ...app, token_endpoint_auth_method: "private_key_jwt", jwks, id_token_signed_response_alg: "EdDSA" }]);
    expect(clientFromConfig(parsed!)).toMatchObject({ token_endpoint_auth_method: "private_key_jwt", jwks, id_token_signed_response_alg: "EdDSA" });
    for (
      const bad of [
        { ...app, token_endpoint_auth_method: "private_key_jwt" },
        { ...app, token_endpoint_auth_method: "client_secret_jwt" },
        { ...app, jwks, jwks_uri: "http://127.0.0.1/jwks" },
        { ...app, id_token_signed_response_alg: "HS256" },
        { ...app, userinfo_signed_response_alg: "none" },
        { ...app, request_object_signing_alg: "XS256" },
        { ...app, redirect_uris: ["not a url"] },
      ]
    ) expect(() => parseClientConfigs([bad]), JSON.stringify(bad)).toThrow(ClientConfigError);
  });

  it("authMethodsOf: the registered method, else what the client holds", () => {
    const client = (extra: Record<string, unknown>) => clientFromConfig({ ...app, ...extra });
    expect([...authMethodsOf(client({ token_endpoint_auth_method: "client_secret_jwt", client_secret: "s" }))]).toEqual(["client_secret_jwt"]);
    expect([...authMethodsOf(client({ client_secret: "s" }))]).toEqual(["client_secret_basic", "client_secret_post", "client_secret_jwt"]);
    expect([...authMethodsOf(client({ jwks }))]).toEqual(["private_key_jwt"]);
    expect([...authMethodsOf(client({}))]).toEqual(["none"]);
  });

  it("a client with keys and no secret is not public: no credentials are refused", () => {
    const clients = new Map([["app", clientFromConfig({ ...app, jwks })]]);
    expect(() => authenticateClient(clients, readClientCredentials(undefined, form({ client_id: "app" })))).toThrow(/client authentication required/);
  });

  it("readClientCredentials reads an assertion, and refuses it beside another method or with another type", () => {
    const type = { client_assertion_type: JWT_BEARER_ASSERTION_TYPE };
    expect(readClientCredentials(undefined, form({ ...type, client_assertion: "a.b.c" }))).toEqual({ assertion: "a.b.c", method: "jwt" });
    expect(() => readClientCredentials(basic("app", "s"), form({ ...type, client_assertion: "a.b.c" }))).toThrow(/only one/);
    expect(() => readClientCredentials(undefined, form({ client_assertion_type: "urn:other", client_assertion: "a.b.c" }))).toThrow(/client_assertion_type/);
    expect(() => readClientCredentials(undefined, form({ client_assertion: "a.b.c" }))).toThrow(/go together/);
  });
});
