import { describe, expect, it } from "vitest";
import { authenticateClient, buildClients, loopbackKey, postLogoutUriAllowed, readClientCredentials, redirectUriAllowed, WEB_APP_SECRET } from "./clients.ts";
import { OAuthError } from "./errors.ts";
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
