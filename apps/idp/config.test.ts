import { expect, test } from "vitest";
import { ConfigError } from "#lib/config";
import { parseCommandLine } from "#lib/config/flags";
import { type ConfigIo, IDP_FLAGS, idpAppOptions, loadIdpConfig } from "./config.ts";

function io(env: Record<string, string> = {}, files: Record<string, string> = {}): ConfigIo {
  return { env: { HOME: "/h", ...env }, readTextFile: async (p) => files[p] };
}
const args = (...argv: string[]) => parseCommandLine(argv, IDP_FLAGS);

test("the spec's defaults", async () => {
  const config = await loadIdpConfig(args(), io());
  expect(config.values).toEqual({
    issuer: "http://localhost:5556",
    addr: "127.0.0.1:5556",
    "client-id": "dev-client",
    "client-secret": "",
    "redirect-uris": ["http://localhost:3000/callback", "http://127.0.0.1:3000/callback"],
    "post-logout-redirect-uris": [],
    "cors-origins": [],
    "users-file": "",
    "signing-keys-file": "",
    "claim-mappings-file": "",
    "jwt-bearer-issuers": "",
    "access-token-format": "opaque",
    "access-token-audience": "",
    state: "memory",
    "state-auth-token": "",
    "allowed-hosts": [],
    registration: "auto",
    "registration-token": "",
    "require-pushed-authorization-requests": false,
    "preview-redirect-uris": [],
    "debug-token": "",
  });
});

test("--state takes memory or a libSQL URL, from a flag or IDP_STATE; a bad one is refused with its source", async () => {
  expect((await loadIdpConfig(args("--state", "file:./data/idp.db"), io())).values.state).toBe("file:./data/idp.db");
  const fromEnv = await loadIdpConfig(args(), io({ IDP_STATE: "libsql://idp-preview.turso.io", IDP_STATE_AUTH_TOKEN: "t0ken" }));
  expect(fromEnv.values.state).toBe("libsql://idp-preview.turso.io");
  expect(fromEnv.values["state-auth-token"]).toBe("t0ken");
  expect(fromEnv.sources.state).toBe("env:IDP_STATE");
  await expect(loadIdpConfig(args("--state", "postgres://db"), io())).rejects.toThrow("state from flag:--state: expected memory, file:PATH");
});

test("the issuer follows addr only while nothing sets the issuer", async () => {
  expect((await loadIdpConfig(args("--addr", "0.0.0.0:8000"), io())).values.issuer).toBe("http://localhost:8000");
  const set = await loadIdpConfig(args("--addr", "0.0.0.0:8000"), io({ IDP_ISSUER: "https://idp.test/realms/x" }));
  expect(set.values.issuer).toBe("https://idp.test/realms/x");
  expect(set.sources.issuer).toBe("env:IDP_ISSUER");
  expect((await loadIdpConfig(args(), io({ IDP_ADDR: "127.0.0.1:6000" }))).sources.issuer).toBe("derived:addr");
});

test("issuer checks: {origin} allowed; query, fragment and other schemes refused", async () => {
  expect((await loadIdpConfig(args("--issuer", "{origin}/realms/dev"), io())).values.issuer).toBe("{origin}/realms/dev");
  for (const bad of ["http://x/?a=1", "http://x/#f", "ftp://x", "localhost:5556"]) {
    await expect(loadIdpConfig(args("--issuer", bad), io())).rejects.toBeInstanceOf(ConfigError);
  }
  await expect(loadIdpConfig(args("--client-id="), io())).rejects.toMatchObject({ code: "CONFIG_INVALID_VALUE", field: "client-id" });
  await expect(loadIdpConfig(args("--config-file", "c.yaml"), io({}, { "c.yaml": "oidc:\n  redirect-uris: []\n" }))).rejects.toMatchObject({
    message: "redirect-uris from config:c.yaml: needs at least one redirect URI",
  });
});

test("createApp options: fields, the users file, and env-only settings", async () => {
  const files = { "u.json": '{"users":[{"login":"eve","roles":["r"]}]}' };
  const env = { IDP_TOKEN_SLOW_MS: "50", IDP_CLIENT_SECRET: "sh" };
  const config = await loadIdpConfig(args("--users-file", "u.json", "--client-id", "app", "--redirect-uris", "http://a/cb"), io(env, files));
  const options = await idpAppOptions(config, io(env, files));
  expect(options).toMatchObject({
    issuer: "http://localhost:5556",
    clientId: "app",
    clientSecret: "sh",
    redirectUris: ["http://a/cb"],
    users: { users: [{ login: "eve", roles: ["r"] }] },
    tokenSlowMs: 50,
  });
  expect(options.signingKeys).toBeUndefined();
});

test("post-logout redirect URIs and CORS origins: flag, env or config file; bad values refused with their source", async () => {
  const file = { "c.yaml": "oidc:\n  post-logout-redirect-uris: [http://localhost:4000/]\n  cors-origins: ['*']\n" };
  const fromFile = await idpAppOptions(await loadIdpConfig(args("--config-file", "c.yaml"), io({}, file)), io({}, file));
  expect(fromFile).toMatchObject({ postLogoutRedirectUris: ["http://localhost:4000/"], corsOrigins: ["*"] });
  const env = { IDP_POST_LOGOUT_REDIRECT_URIS: "http://a.test/bye,http://a.test/", IDP_CORS_ORIGINS: "http://b.test" };
  const fromEnv = await loadIdpConfig(args(), io(env));
  expect(fromEnv.values).toMatchObject({ "post-logout-redirect-uris": ["http://a.test/bye", "http://a.test/"], "cors-origins": ["http://b.test"] });
  expect(fromEnv.sources["cors-origins"]).toBe("env:IDP_CORS_ORIGINS");
  const flags = await loadIdpConfig(args("--cors-origins", "http://c.test:8000", "--post-logout-redirect-uris", "http://c.test:8000/index.html"), io(env));
  expect(flags.values).toMatchObject({ "post-logout-redirect-uris": ["http://c.test:8000/index.html"], "cors-origins": ["http://c.test:8000"] });
  await expect(loadIdpConfig(args("--cors-origins", "http://c.test/app"), io())).rejects.toThrow(
    "cors-origins from flag:--cors-origins: expected * or an origin",
  );
  await expect(loadIdpConfig(args("--post-logout-redirect-uris", "/bye"), io())).rejects.toThrow(
    "post-logout-redirect-uris from flag:--post-logout-redirect-uris: every post-logout redirect URI must be an absolute URL",
  );
});

test("claim mappings: a YAML file (claim-mappings-file) or IDP_CLAIM_MAPPINGS, not both; a bad document names the mapping", async () => {
  const files = { "m.yaml": "mappings:\n  - client: web-app\n    claims: {department: R&D}\n", "bad.yaml": "mappings:\n  - claims: {iss: x}\n" };
  const fromFile = await idpAppOptions(await loadIdpConfig(args("--claim-mappings-file", "m.yaml"), io({}, files)), io({}, files));
  expect(fromFile.claimMappings).toEqual({ mappings: [{ client: "web-app", claims: { department: "R&D" } }] });
  const env = { IDP_CLAIM_MAPPINGS: '[{"scope": "admin", "id_token": {"admin": true}}]' };
  expect((await idpAppOptions(await loadIdpConfig(args(), io(env)), io(env))).claimMappings).toEqual([{ scope: "admin", id_token: { admin: true } }]);
  await expect(idpAppOptions(await loadIdpConfig(args("--claim-mappings-file", "bad.yaml"), io({}, files)), io({}, files))).rejects.toThrow(
    "claim mappings file bad.yaml: mappings[0].claims: may not set claims the provider sets",
  );
  const both = await loadIdpConfig(args("--claim-mappings-file", "m.yaml"), io(env, files));
  await expect(idpAppOptions(both, io(env, files))).rejects.toThrow("both IDP_CLAIM_MAPPINGS and claim-mappings-file");
  const badEnv = { IDP_CLAIM_MAPPINGS: '{"mappings": [{"sub": 1}]}' };
  await expect(idpAppOptions(await loadIdpConfig(args(), io(badEnv)), io(badEnv))).rejects.toThrow("IDP_CLAIM_MAPPINGS: mappings[0].sub");
});

test("registration auto: open while listening on loopback, off beyond; token needs the token", async () => {
  const options = async (argv: string[], env: Record<string, string> = {}) => idpAppOptions(await loadIdpConfig(args(...argv), io(env)), io(env));
  expect((await options([])).registration).toBe("open");
  expect((await options(["--addr", "0.0.0.0:5556"])).registration).toBe("off");
  expect((await options(["--registration", "open", "--addr", "0.0.0.0:5556"])).registration).toBe("open");
  await expect(options(["--registration", "token"])).rejects.toThrow(/registration-token/);
  const withToken = await options([], { IDP_REGISTRATION: "token", IDP_REGISTRATION_TOKEN: "an-initial-access-token" });
  expect(withToken).toMatchObject({ registration: "token", registrationToken: "an-initial-access-token" });
  expect((await options(["--require-pushed-authorization-requests"])).requirePushedAuthorizationRequests).toBe(true);
  expect((await options(["--preview-redirect-uris", "https://*.pr.example.com/cb"])).previewRedirectUris).toEqual(["https://*.pr.example.com/cb"]);
  await expect(options(["--preview-redirect-uris", "https://*.com/cb"])).rejects.toThrow(/preview-redirect-uris/);
});
