/**
 * The identity provider's configuration: the `oidc` section (spec "Configuration"), loaded from
 * defaults < profile < config files < environment < positional arguments < flags, and turned into
 * `createApp` options (the seeded users file and the signing keys file are read and checked here,
 * so a bad file stops the command with a clear message before anything listens).
 *
 * Runtime-free: files and the environment come in through `ConfigIo`.
 */
import type { JWK } from "jose";
import * as v from "valibot";
import {
  booleanField,
  ConfigError,
  defineSection,
  listenAddressCheck,
  listField,
  type LoadedSection,
  loadSection,
  parseYaml,
  sectionFlags,
  stringField,
} from "#lib/config";
import type { FlagSpecs, ParsedArgs } from "#lib/config/flags";
import { isLibsqlUrl } from "#lib/db/libsql";
import { accessTokenProblem, hostAllowlist, listensBeyondLoopback } from "#lib/http";
import { parseListenAddress } from "#lib/runtime";
import type { IdpAppOptions } from "./app.ts";
import { CORS_ORIGIN_HINT, parseCorsOrigin } from "./domain/cors.ts";
import { parseClaimMappings } from "./domain/claim-mappings.ts";
import { parseTrustedIssuers, type TrustedIssuer } from "./domain/trusted-issuers.ts";
import { importSigningKey, type Kid, parseConfiguredKeys } from "./domain/keys.ts";
import type { AccessTokenFormat } from "./domain/provider.ts";
import { parseSeededUsers } from "./domain/users.ts";
import { optionsFromEnv, parsePreviewRedirectUris } from "./env-options.ts";
import type { RegistrationPolicy } from "./domain/registration.ts";

const DEFAULT_ADDR = "127.0.0.1:5556";
const DEFAULT_ISSUER = "http://localhost:5556";
const ORIGIN = "{origin}";

/** An absolute http(s) URL without query or fragment; `{origin}` stands for the request origin. */
const issuerCheck = v.pipe(
  v.string(),
  v.check((value: string) => {
    try {
      const url = new URL(value.replace(ORIGIN, "http://origin.invalid"));
      return (url.protocol === "http:" || url.protocol === "https:") && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, "expected an absolute http(s) URL without query or fragment (may start with {origin})"),
);

const absoluteUrl = (value: string) => {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
};

const allowedHostsValid = (hosts: string[]) => {
  try {
    hostAllowlist({ hosts });
    return true;
  } catch {
    return false;
  }
};

export const oidcSection = defineSection({
  key: "oidc",
  envPrefix: "IDP_",
  fields: {
    issuer: stringField({
      default: DEFAULT_ISSUER,
      positional: 0,
      description: "Issuer URL; a path is allowed; {origin} is replaced by the request origin. Default http://localhost:<port of addr>",
      check: issuerCheck,
    }),
    addr: stringField({ default: DEFAULT_ADDR, description: "Listen address HOST:PORT (0.0.0.0:5556 exposes it to a LAN)", check: listenAddressCheck }),
    "client-id": stringField({
      default: "dev-client",
      description: "Client id; equal to a builtin it is merged into it",
      check: v.pipe(v.string(), v.nonEmpty("must not be empty")),
    }),
    "client-secret": stringField({ default: "", secret: true, description: "When set, /token enforces it; empty: a public client" }),
    "redirect-uris": listField({
      default: ["http://localhost:3000/callback", "http://127.0.0.1:3000/callback"],
      description: "Redirect URI allowlist (flag repeatable or comma-separated)",
      check: v.pipe(
        v.array(v.string()),
        v.nonEmpty("needs at least one redirect URI"),
        v.check((list) => list.every(absoluteUrl), "every redirect URI must be an absolute URL"),
      ),
    }),
    "post-logout-redirect-uris": listField({
      default: [],
      description: "More post-logout redirect URIs of the configured client (the origins of redirect-uris are accepted already)",
      check: v.pipe(v.array(v.string()), v.check((list) => list.every(absoluteUrl), "every post-logout redirect URI must be an absolute URL")),
    }),
    "cors-origins": listField({
      default: [],
      description:
        "Origins whose pages may call discovery, jwks, token, userinfo, revoke and device authorization, beyond the origins of redirect URIs; * allows any",
      check: v.pipe(v.array(v.string()), v.check((list) => list.every((o) => parseCorsOrigin(o) !== undefined), CORS_ORIGIN_HINT)),
    }),
    "users-file": stringField({ default: "", description: "YAML or JSON file of seeded users, relative to the working directory" }),
    "signing-keys-file": stringField({
      default: "",
      description: "Private JWK set (JSON) for the kids of /jwks (dev-key-1, ...; gen-keys prints one); keeps tokens valid across restarts",
    }),
    "claim-mappings-file": stringField({
      default: "",
      description:
        "YAML or JSON file of claims per client, scope or subject ({mappings: [{client?, scope?, sub?, claims | id_token | access_token | userinfo}]})",
    }),
    "jwt-bearer-issuers": stringField({
      default: "",
      description: "Trusted issuers of the JWT bearer grant (RFC 7523), JSON or YAML: [{issuer, jwks | jwks_uri (loopback), audiences?, subject_claim?}]",
    }),
    "access-token-format": stringField({
      default: "opaque",
      description: "opaque, or jwt: RFC 9068 access tokens a resource server verifies against /jwks",
      check: v.picklist(["opaque", "jwt"], 'expected "opaque" or "jwt"'),
    }),
    "access-token-audience": stringField({ default: "", description: "aud of JWT access tokens (empty: the client id)" }),
    state: stringField({
      default: "memory",
      description: "Where the state lives: memory, or a libSQL database (file:./data/idp.db, libsql://...) that several instances share as one provider",
      check: v.pipe(
        v.string(),
        v.check((value: string) => value === "memory" || isLibsqlUrl(value), "expected memory, file:PATH, :memory:, libsql://HOST or https://HOST"),
      ),
    }),
    "state-auth-token": stringField({ default: "", secret: true, description: "Auth token of a remote libSQL state database (Turso)" }),
    "allowed-hosts": listField({
      default: [],
      description:
        "Host names answered beyond loopback, localhost and the issuer's host (DNS rebinding: any other Host gets 421); .domain for its subdomains, * for any (off)",
      check: v.pipe(v.array(v.string()), v.check((list) => allowedHostsValid(list), "expected host names, .domain or *")),
    }),
    registration: stringField({
      default: "auto",
      description: "Dynamic client registration (RFC 7591) at /register: open, token (needs registration-token), off; auto: open on loopback, off beyond",
      check: v.picklist(["auto", "open", "token", "off"], 'expected "auto", "open", "token" or "off"'),
    }),
    "registration-token": stringField({
      default: "",
      secret: true,
      description:
        "Initial access token for registration (Authorization: Bearer); needed by registration token, lets open registration add redirect URI patterns",
      check: v.pipe(v.string(), v.check((t: string) => t === "" || accessTokenProblem(t) === undefined, "at least 16 printable characters without spaces")),
    }),
    "require-pushed-authorization-requests": booleanField({
      default: false,
      description: "Every authorization request must be pushed to /par first (RFC 9126); per client: require_pushed_authorization_requests",
    }),
    "preview-redirect-uris": listField({
      default: [],
      description: "Redirect URIs added to the configured client's (not replacing them): exact, or https://*.<domain>/path with one wildcard label",
    }),
    "debug-token": stringField({
      default: "",
      secret: true,
      description:
        "Access token of the debug interface (Authorization: Bearer, or the cookie the printed link sets); required to listen beyond loopback (16+ characters)",
      check: v.pipe(v.string(), v.check((t: string) => t === "" || accessTokenProblem(t) === undefined, "at least 16 printable characters without spaces")),
    }),
  },
});

type OidcSection = typeof oidcSection;
export type OidcFields = OidcSection["fields"];
export type OidcConfig = LoadedSection<OidcFields>;

/** Every flag `serve-dev` and `print-config` accept: the section's fields plus these options. */
export const IDP_FLAGS: FlagSpecs = {
  ...sectionFlags(oidcSection),
  "config-file": {},
  profile: {},
  format: {},
  "print-parsed-fields": { boolean: true },
  help: { boolean: true },
};

/** What loading the configuration needs from the host. */
export interface ConfigIo {
  env: Record<string, string | undefined>;
  /** Reads a UTF-8 file (relative paths against the working directory); `undefined` if missing. */
  readTextFile(path: string): Promise<string | undefined>;
}

/**
 * Loads the `oidc` section. When nothing set the issuer but the listen address came from
 * somewhere, the issuer follows its port (`http://localhost:<port>`, source `derived:addr`).
 */
export async function loadIdpConfig(args: ParsedArgs, io: ConfigIo): Promise<OidcConfig> {
  const loaded = await loadSection({ section: oidcSection, app: "idp", args, env: io.env, readTextFile: io.readTextFile });
  if (loaded.sources.issuer === "default" && loaded.sources.addr !== "default") {
    loaded.values.issuer = `http://localhost:${parseListenAddress(loaded.values.addr).port}`;
    loaded.sources.issuer = "derived:addr";
  }
  return loaded;
}

function firstLine(err: unknown): string {
  return ((err as Error).message ?? String(err)).split("\n")[0]!;
}

async function readNamedFile(io: ConfigIo, field: string, path: string, source: string): Promise<string> {
  const text = await io.readTextFile(path);
  if (text === undefined) throw new ConfigError("CONFIG_FILE_NOT_FOUND", `${field} ${path} (from ${source}) does not exist`, source, field);
  return text;
}

/** Reads and validates the seeded users file (YAML or JSON); the parsed document goes to createApp. */
async function readUsersFile(io: ConfigIo, path: string, source: string): Promise<unknown> {
  const text = await readNamedFile(io, "users-file", path, source);
  let doc: unknown;
  try {
    doc = await parseYaml(text); // YAML is a superset of JSON: one parser reads both
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `users file ${path}: not valid YAML or JSON: ${firstLine(err)}`, source, "users-file");
  }
  try {
    parseSeededUsers(doc);
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `users file ${path}: ${firstLine(err)}`, source, "users-file");
  }
  return doc;
}

/** Checks a private JWK set: JSON, our kids, private keys that import for their kid's algorithm. */
async function checkSigningKeys(value: unknown, where: string, source: string): Promise<void> {
  let keys: Partial<Record<Kid, JWK>>;
  try {
    keys = parseConfiguredKeys(value);
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `${where}: ${firstLine(err)}`, source, "signing-keys-file");
  }
  for (const [kid, jwk] of Object.entries(keys) as [Kid, JWK][]) {
    try {
      await importSigningKey(kid, jwk);
    } catch (err) {
      throw new ConfigError("CONFIG_INVALID_VALUE", `${where}: ${firstLine(err)}`, source, "signing-keys-file");
    }
  }
}

/** Reads and validates a claim mappings file (YAML or JSON; claim-mappings.ts); the parsed document goes to createApp. */
async function readClaimMappingsFile(io: ConfigIo, path: string, source: string): Promise<unknown> {
  const text = await readNamedFile(io, "claim-mappings-file", path, source);
  let doc: unknown;
  try {
    doc = await parseYaml(text);
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `claim mappings file ${path}: not valid YAML or JSON: ${firstLine(err)}`, source, "claim-mappings-file");
  }
  try {
    parseClaimMappings(doc);
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `claim mappings file ${path}: ${firstLine(err)}`, source, "claim-mappings-file");
  }
  return doc;
}

async function readSigningKeysFile(io: ConfigIo, path: string, source: string): Promise<unknown> {
  const text = await readNamedFile(io, "signing-keys-file", path, source);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `signing keys file ${path}: not valid JSON: ${firstLine(err)}`, source, "signing-keys-file");
  }
  await checkSigningKeys(doc, `signing keys file ${path}`, source);
  return doc;
}

async function readTrustedIssuers(text: string, source: string): Promise<TrustedIssuer[]> {
  try {
    return parseTrustedIssuers(await parseYaml(text)); // YAML is a superset of JSON
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `jwt-bearer-issuers: ${firstLine(err)}`, source, "jwt-bearer-issuers");
  }
}

/** The inline alternatives to the two files, honored by every runtime (env-options.ts). */
const INLINE = { "users-file": "IDP_USERS", "signing-keys-file": "IDP_SIGNING_KEYS", "claim-mappings-file": "IDP_CLAIM_MAPPINGS" } as const;

/**
 * `createApp` options from the resolved configuration, plus the settings that exist only as
 * environment variables (IDP_USERS, IDP_SIGNING_KEYS, IDP_TOKEN_SLOW_MS, IDP_JWKS_SLOW_MS).
 * A file and its inline variable both set is `CONFIG_CONFLICT`: neither silently wins.
 */
export async function idpAppOptions(config: OidcConfig, io: ConfigIo): Promise<Omit<IdpAppOptions, "logger" | "issuer"> & { issuer: string }> {
  const { values, sources } = config;
  for (const [field, variable] of Object.entries(INLINE) as [keyof typeof INLINE, string][]) {
    if (values[field] !== "" && (io.env[variable] ?? "").trim() !== "") {
      throw new ConfigError("CONFIG_CONFLICT", `both ${variable} and ${field} (from ${sources[field]}) are set; use one`, sources[field], field);
    }
  }
  let fromEnv: Awaited<ReturnType<typeof optionsFromEnv>>;
  try {
    fromEnv = await optionsFromEnv(io.env);
  } catch (err) {
    const variable = (err as { variable?: string }).variable;
    throw new ConfigError("CONFIG_INVALID_VALUE", firstLine(err), variable ? `env:${variable}` : undefined);
  }
  if (fromEnv.users !== undefined) {
    try {
      parseSeededUsers(fromEnv.users);
    } catch (err) {
      throw new ConfigError("CONFIG_INVALID_VALUE", `IDP_USERS: ${firstLine(err)}`, "env:IDP_USERS");
    }
  }
  if (fromEnv.signingKeys !== undefined) await checkSigningKeys(fromEnv.signingKeys, "IDP_SIGNING_KEYS", "env:IDP_SIGNING_KEYS");

  const options: Omit<IdpAppOptions, "logger"> = {
    ...fromEnv,
    issuer: values.issuer,
    clientId: values["client-id"],
    clientSecret: values["client-secret"],
    redirectUris: values["redirect-uris"],
    postLogoutRedirectUris: values["post-logout-redirect-uris"],
    corsOrigins: values["cors-origins"],
    accessTokenFormat: values["access-token-format"] as AccessTokenFormat,
    accessTokenAudience: values["access-token-audience"],
    debugToken: values["debug-token"] || undefined,
  };
  if (values["jwt-bearer-issuers"] !== "") options.jwtBearerIssuers = await readTrustedIssuers(values["jwt-bearer-issuers"], sources["jwt-bearer-issuers"]);
  Object.assign(options, registrationOptions(config));
  if (values["users-file"] !== "") options.users = await readUsersFile(io, values["users-file"], sources["users-file"]);
  if (values["claim-mappings-file"] !== "") {
    options.claimMappings = await readClaimMappingsFile(io, values["claim-mappings-file"], sources["claim-mappings-file"]);
  }
  if (values["signing-keys-file"] !== "") options.signingKeys = await readSigningKeysFile(io, values["signing-keys-file"], sources["signing-keys-file"]);
  return options;
}

/**
 * Registration and PAR options. `auto` registration is open while the provider listens on
 * loopback only, and off once it listens beyond (anyone who reaches it could register clients).
 */
function registrationOptions(config: OidcConfig): Partial<IdpAppOptions> {
  const { values, sources } = config;
  const registration = values.registration === "auto"
    ? (listensBeyondLoopback(parseListenAddress(values.addr).hostname) ? "off" : "open")
    : (values.registration as RegistrationPolicy);
  const out: Partial<IdpAppOptions> = { registration, requirePushedAuthorizationRequests: values["require-pushed-authorization-requests"] };
  if (values["registration-token"] !== "") out.registrationToken = values["registration-token"];
  if (registration === "token" && out.registrationToken === undefined) {
    throw new ConfigError("CONFIG_INVALID_VALUE", "registration token needs registration-token (IDP_REGISTRATION_TOKEN)", sources.registration, "registration");
  }
  if (values["preview-redirect-uris"].length > 0) {
    try {
      out.previewRedirectUris = parsePreviewRedirectUris("preview-redirect-uris", values["preview-redirect-uris"].join(","));
    } catch (err) {
      throw new ConfigError("CONFIG_INVALID_VALUE", firstLine(err), sources["preview-redirect-uris"], "preview-redirect-uris");
    }
  }
  return out;
}
