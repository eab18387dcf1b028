import { describe, expect, it } from "vitest";
import { EnvOptionError, optionsFromEnv } from "./env-options.ts";

describe("optionsFromEnv", () => {
  it("reads every IDP_ variable", async () => {
    const options = await optionsFromEnv({
      IDP_ISSUER: "{origin}/realms/dev",
      IDP_CLIENT_ID: "my-app",
      IDP_CLIENT_SECRET: "s3",
      IDP_REDIRECT_URIS: "http://a.test/cb, http://b.test/cb",
      IDP_USERS: "users:\n  - login: carol\n",
      IDP_SIGNING_KEYS: '{"keys":[]}',
      IDP_TOKEN_SLOW_MS: "300",
      IDP_JWKS_SLOW_MS: "0",
    });
    expect(options).toEqual({
      issuer: "{origin}/realms/dev",
      clientId: "my-app",
      clientSecret: "s3",
      redirectUris: ["http://a.test/cb", "http://b.test/cb"],
      users: { users: [{ login: "carol" }] },
      signingKeys: { keys: [] },
      tokenSlowMs: 300,
      jwksSlowMs: 0,
    });
  });
  it("takes JSON lists and JSON users, and leaves unset variables out", async () => {
    expect(await optionsFromEnv({ IDP_REDIRECT_URIS: '["http://a.test/cb"]', IDP_USERS: '[{"login":"x"}]' })).toEqual({
      redirectUris: ["http://a.test/cb"],
      users: [{ login: "x" }],
    });
    expect(await optionsFromEnv({})).toEqual({});
  });
  it("reads the post-logout redirect URIs and the CORS origins, and checks the origins", async () => {
    expect(await optionsFromEnv({ IDP_POST_LOGOUT_REDIRECT_URIS: "http://a.test/,http://a.test/bye", IDP_CORS_ORIGINS: '["*", "http://b.test/"]' })).toEqual({
      postLogoutRedirectUris: ["http://a.test/", "http://a.test/bye"],
      corsOrigins: ["*", "http://b.test/"],
    });
    await expect(optionsFromEnv({ IDP_CORS_ORIGINS: "http://b.test/app" })).rejects.toThrow(
      /IDP_CORS_ORIGINS: "http:\/\/b.test\/app": expected \* or an origin/,
    );
  });
  it("names the variable in its errors", async () => {
    await expect(optionsFromEnv({ IDP_SIGNING_KEYS: "{" })).rejects.toThrow(EnvOptionError);
    await expect(optionsFromEnv({ IDP_USERS: "users: [" })).rejects.toThrow(/IDP_USERS/);
    await expect(optionsFromEnv({ IDP_TOKEN_SLOW_MS: "soon" })).rejects.toThrow(/IDP_TOKEN_SLOW_MS/);
    await expect(optionsFromEnv({ IDP_REDIRECT_URIS: "[1]" })).rejects.toThrow(/IDP_REDIRECT_URIS/);
  });
});

describe("IDP_ISSUERS_BY_PATH", () => {
  it("on/off (true/false, 1/0); anything else is an error naming the variable", async () => {
    expect((await optionsFromEnv({ IDP_ISSUERS_BY_PATH: "off" })).issuersByPath).toBe(false);
    expect((await optionsFromEnv({ IDP_ISSUERS_BY_PATH: "ON" })).issuersByPath).toBe(true);
    expect((await optionsFromEnv({})).issuersByPath).toBeUndefined();
    await expect(optionsFromEnv({ IDP_ISSUERS_BY_PATH: "maybe" })).rejects.toThrow(/IDP_ISSUERS_BY_PATH/);
  });
});

describe("registration and PAR variables", () => {
  const TOKEN = "an-initial-access-token";
  it("IDP_REGISTRATION with IDP_REGISTRATION_TOKEN; unset or auto leaves the default", async () => {
    expect(await optionsFromEnv({ IDP_REGISTRATION: "token", IDP_REGISTRATION_TOKEN: TOKEN })).toMatchObject({
      registration: "token",
      registrationToken: TOKEN,
    });
    expect((await optionsFromEnv({ IDP_REGISTRATION: "OFF" })).registration).toBe("off");
    expect((await optionsFromEnv({ IDP_REGISTRATION: "auto" })).registration).toBeUndefined();
    await expect(optionsFromEnv({ IDP_REGISTRATION: "token" })).rejects.toThrow(/IDP_REGISTRATION: token needs IDP_REGISTRATION_TOKEN/);
    await expect(optionsFromEnv({ IDP_REGISTRATION: "sometimes" })).rejects.toThrow(/IDP_REGISTRATION/);
    await expect(optionsFromEnv({ IDP_REGISTRATION_TOKEN: "short" })).rejects.toThrow(/IDP_REGISTRATION_TOKEN/);
  });
  it("IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS is a switch", async () => {
    expect((await optionsFromEnv({ IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS: "on" })).requirePushedAuthorizationRequests).toBe(true);
    await expect(optionsFromEnv({ IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS: "yes please" })).rejects.toThrow(/IDP_REQUIRE_PUSHED/);
  });
  it("IDP_PREVIEW_REDIRECT_URIS takes exact URIs and patterns, and refuses a pattern that reaches too far", async () => {
    expect((await optionsFromEnv({ IDP_PREVIEW_REDIRECT_URIS: "https://pr-1.app.example/cb, https://*.app.example/cb" })).previewRedirectUris).toEqual([
      "https://pr-1.app.example/cb",
      "https://*.app.example/cb",
    ]);
    await expect(optionsFromEnv({ IDP_PREVIEW_REDIRECT_URIS: "https://*.vercel.app/cb" })).rejects.toThrow(/IDP_PREVIEW_REDIRECT_URIS: .*vercel.app/);
    await expect(optionsFromEnv({ IDP_PREVIEW_REDIRECT_URIS: "not a uri" })).rejects.toThrow(/IDP_PREVIEW_REDIRECT_URIS/);
  });
});
