/**
 * Provider settings from environment variables, shared by every runtime: the Node/Deno CLI reads
 * them from the process environment, the workerd entry from its wrangler vars. Runtime-free.
 *
 * `IDP_ISSUER` may contain `{origin}`, replaced per request by the request's origin (see app.ts).
 */
import { parseYaml } from "#lib/config";
import { accessTokenProblem } from "#lib/http";
import { CodedError } from "#lib/errors";
import type { IdpAppOptions } from "./app.ts";
import { parseClientConfigs } from "./domain/clients.ts";
import { CORS_ORIGIN_HINT, parseCorsOrigin } from "./domain/cors.ts";
import { ClaimMappingsError, parseClaimMappings } from "./domain/claim-mappings.ts";
import { ClientConfigError, TrustedIssuersError } from "./domain/errors.ts";
import { parseTrustedIssuers } from "./domain/trusted-issuers.ts";
import { isRedirectPattern, parseRedirectPattern } from "./domain/redirect-patterns.ts";
import { REGISTRATION_POLICIES, type RegistrationPolicy } from "./domain/registration.ts";

export type Env = Record<string, string | undefined>;

/** A bad environment setting (also `BackchannelConfigError`'s code). */
export type EnvOptionErrorCode = "INVALID_ENV";

export class EnvOptionError extends CodedError<EnvOptionErrorCode> {
  constructor(readonly variable: string, message: string) {
    super("INVALID_ENV", `${variable}: ${message}`);
  }
}

/** A comma-separated list or a JSON list of strings. */
function parseList(variable: string, value: string): string[] {
  const text = value.trim();
  if (text.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new EnvOptionError(variable, "not a valid JSON list");
    }
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === "string")) {
      throw new EnvOptionError(variable, "expected a JSON list of strings");
    }
    return parsed.map((s) => s.trim()).filter((s) => s !== "");
  }
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

async function parseDocument(variable: string, value: string): Promise<unknown> {
  try {
    // YAML is a superset of JSON, so one parser reads both spellings.
    return await parseYaml(value);
  } catch (err) {
    throw new EnvOptionError(variable, `not valid YAML or JSON (${(err as Error).message.split("\n")[0]})`);
  }
}

function parseMillis(variable: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new EnvOptionError(variable, "expected milliseconds (a non-negative integer)");
  return n;
}

/** A JSON object of strings (`{"web-app": "http://127.0.0.1:4000/backchannel"}`). */
function parseUriMap(variable: string, value: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new EnvOptionError(variable, 'not valid JSON (expected {"client-id": "http://..."})');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === "string")) {
    throw new EnvOptionError(variable, 'expected a JSON object of client ids to URIs ({"client-id": "http://..."})');
  }
  return parsed as Record<string, string>;
}

function parseSwitch(variable: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (["on", "true", "1"].includes(v)) return true;
  if (["off", "false", "0"].includes(v)) return false;
  throw new EnvOptionError(variable, 'expected "on" or "off"');
}

const isAbsoluteUri = (value: string) => {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
};

/** A preview deployment's redirect URIs: exact absolute URIs, or patterns (redirect-patterns.ts). */
export function parsePreviewRedirectUris(variable: string, value: string): string[] {
  const entries = parseList(variable, value);
  for (const entry of entries) {
    if (isRedirectPattern(entry)) {
      try {
        parseRedirectPattern(entry);
      } catch (err) {
        throw new EnvOptionError(variable, (err as Error).message);
      }
    } else if (!isAbsoluteUri(entry) || entry.includes("#")) {
      throw new EnvOptionError(variable, `"${entry}" is not an absolute URI without fragment`);
    }
  }
  return entries;
}

/**
 * Registration and PAR settings: IDP_REGISTRATION (open, token, off; unset: open on a loopback
 * issuer), IDP_REGISTRATION_TOKEN, IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS, IDP_PREVIEW_REDIRECT_URIS.
 */
function registrationFromEnv(get: (name: string) => string | undefined): Partial<IdpAppOptions> {
  const out: Partial<IdpAppOptions> = {};
  const policy = get("IDP_REGISTRATION")?.trim().toLowerCase();
  if (policy !== undefined && policy !== "auto") {
    if (!(REGISTRATION_POLICIES as readonly string[]).includes(policy)) {
      throw new EnvOptionError("IDP_REGISTRATION", 'expected "open", "token", "off" or "auto"');
    }
    out.registration = policy as RegistrationPolicy;
  }
  const token = get("IDP_REGISTRATION_TOKEN")?.trim();
  if (token !== undefined) {
    const problem = accessTokenProblem(token);
    if (problem) throw new EnvOptionError("IDP_REGISTRATION_TOKEN", problem);
    out.registrationToken = token;
  }
  if (out.registration === "token" && out.registrationToken === undefined) {
    throw new EnvOptionError("IDP_REGISTRATION", "token needs IDP_REGISTRATION_TOKEN (the initial access token)");
  }
  const requirePar = get("IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS");
  if (requirePar !== undefined) out.requirePushedAuthorizationRequests = parseSwitch("IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS", requirePar);
  const preview = get("IDP_PREVIEW_REDIRECT_URIS");
  if (preview !== undefined) out.previewRedirectUris = parsePreviewRedirectUris("IDP_PREVIEW_REDIRECT_URIS", preview);
  return out;
}

/** A document variable through its decoder, whose own errors are reported under the variable's name. */
async function decodeDocument<T>(name: string, raw: string, decode: (doc: unknown) => T, decodeError: abstract new (...args: never[]) => Error): Promise<T> {
  const doc = await parseDocument(name, raw);
  try {
    return decode(doc);
  } catch (err) {
    if (err instanceof decodeError) throw new EnvOptionError(name, err.message);
    throw err;
  }
}

/**
 * The options set by `IDP_*` variables; unset or empty variables leave the option out. Async only
 * because the YAML parser is loaded when `IDP_USERS` needs it.
 */
export async function optionsFromEnv(env: Env): Promise<Partial<IdpAppOptions>> {
  const out: Partial<IdpAppOptions> = {};
  const get = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? undefined : v;
  };
  const issuer = get("IDP_ISSUER");
  if (issuer !== undefined) out.issuer = issuer.trim();
  const clientId = get("IDP_CLIENT_ID");
  if (clientId !== undefined) out.clientId = clientId.trim();
  if (env.IDP_CLIENT_SECRET !== undefined) out.clientSecret = env.IDP_CLIENT_SECRET;
  const redirects = get("IDP_REDIRECT_URIS");
  if (redirects !== undefined) out.redirectUris = parseList("IDP_REDIRECT_URIS", redirects);
  const postLogout = get("IDP_POST_LOGOUT_REDIRECT_URIS");
  if (postLogout !== undefined) out.postLogoutRedirectUris = parseList("IDP_POST_LOGOUT_REDIRECT_URIS", postLogout);
  const corsOrigins = get("IDP_CORS_ORIGINS");
  if (corsOrigins !== undefined) {
    out.corsOrigins = parseList("IDP_CORS_ORIGINS", corsOrigins);
    const bad = out.corsOrigins.find((o) => parseCorsOrigin(o) === undefined);
    if (bad !== undefined) throw new EnvOptionError("IDP_CORS_ORIGINS", `"${bad}": ${CORS_ORIGIN_HINT}`);
  }
  const users = get("IDP_USERS");
  if (users !== undefined) out.users = await parseDocument("IDP_USERS", users);
  const clients = get("IDP_CLIENTS");
  if (clients !== undefined) out.clients = await decodeDocument("IDP_CLIENTS", clients, parseClientConfigs, ClientConfigError);
  const trusted = get("IDP_JWT_BEARER_ISSUERS");
  if (trusted !== undefined) out.jwtBearerIssuers = await decodeDocument("IDP_JWT_BEARER_ISSUERS", trusted, parseTrustedIssuers, TrustedIssuersError);
  const mappings = get("IDP_CLAIM_MAPPINGS");
  if (mappings !== undefined) {
    // Checked here, so a bad value stops the start with the variable's name; kept as the document.
    out.claimMappings = await decodeDocument("IDP_CLAIM_MAPPINGS", mappings, (doc) => {
      parseClaimMappings(doc);
      return doc;
    }, ClaimMappingsError);
  }
  const keys = get("IDP_SIGNING_KEYS");
  if (keys !== undefined) {
    try {
      out.signingKeys = JSON.parse(keys);
    } catch {
      throw new EnvOptionError("IDP_SIGNING_KEYS", "not valid JSON (expected a private JWK set {keys:[...]})");
    }
  }
  const format = get("IDP_ACCESS_TOKEN_FORMAT");
  if (format !== undefined) {
    if (format.trim() !== "opaque" && format.trim() !== "jwt") throw new EnvOptionError("IDP_ACCESS_TOKEN_FORMAT", 'expected "opaque" or "jwt"');
    out.accessTokenFormat = format.trim() as "opaque" | "jwt";
  }
  const audience = get("IDP_ACCESS_TOKEN_AUDIENCE");
  if (audience !== undefined) out.accessTokenAudience = audience.trim();
  const byPath = get("IDP_ISSUERS_BY_PATH");
  if (byPath !== undefined) out.issuersByPath = parseSwitch("IDP_ISSUERS_BY_PATH", byPath);
  const backchannel = get("IDP_BACKCHANNEL_LOGOUT_URIS");
  if (backchannel !== undefined) out.backchannelLogoutUris = parseUriMap("IDP_BACKCHANNEL_LOGOUT_URIS", backchannel);
  const backchannelTimeout = get("IDP_BACKCHANNEL_TIMEOUT_MS");
  if (backchannelTimeout !== undefined) out.backchannelTimeoutMs = parseMillis("IDP_BACKCHANNEL_TIMEOUT_MS", backchannelTimeout);
  const tokenSlow = get("IDP_TOKEN_SLOW_MS");
  if (tokenSlow !== undefined) out.tokenSlowMs = parseMillis("IDP_TOKEN_SLOW_MS", tokenSlow);
  const debugToken = get("IDP_DEBUG_TOKEN")?.trim();
  if (debugToken !== undefined) {
    const problem = accessTokenProblem(debugToken);
    if (problem) throw new EnvOptionError("IDP_DEBUG_TOKEN", problem);
    out.debugToken = debugToken;
  }
  const jwksSlow = get("IDP_JWKS_SLOW_MS");
  if (jwksSlow !== undefined) out.jwksSlowMs = parseMillis("IDP_JWKS_SLOW_MS", jwksSlow);
  Object.assign(out, registrationFromEnv(get));
  return out;
}
