/**
 * Dynamic client registration (RFC 7591, OpenID Connect Dynamic Client Registration 1.0) and its
 * management (RFC 7592): the metadata rules, the record a registered client is kept as in the
 * state store (kind `client`, per issuer), and the client it stands for. HTTP is in
 * routes/register.ts.
 *
 * A registered client is a `ClientConfig` like a configured one: every metadata field the client
 * model knows (clients.ts) is taken by its registered name, so the client works at authorize,
 * token, introspection, revocation, PAR and logout exactly as a configured client does.
 */
import * as v from "valibot";
import { isScopeToken } from "./scopes.ts";
import { sha256Base64url } from "#lib/oauth";
import { type Client, type ClientConfig, clientFromConfig, ClientJwtMetadataSchema, TOKEN_AUTH_METHODS, type TokenAuthMethod } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { isLoopbackUrl } from "./client-keys.ts";
import { parseRedirectPattern, RedirectPatternError } from "./redirect-patterns.ts";
import { constantTimeEqual } from "./random.ts";

/** `open`: anyone may register; `token`: with the initial access token; `off`: no registration. */
export const REGISTRATION_POLICIES = ["open", "token", "off"] as const;
export type RegistrationPolicy = (typeof REGISTRATION_POLICIES)[number];

/** Methods for which the provider issues a client secret. */
const SECRET_METHODS: readonly TokenAuthMethod[] = ["client_secret_basic", "client_secret_post", "client_secret_jwt"];

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** Schemes that are never a redirect target, native app or not. */
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "file:", "vbscript:", "blob:", "about:"]);

const httpsOrLoopback = (value: string): boolean => {
  try {
    const url = new URL(value);
    if (url.hash || value.includes("#")) return false;
    return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname));
  } catch {
    return false;
  }
};
const webUri = v.pipe(v.string(), v.check(httpsOrLoopback, "expected an https URL (http only on loopback) without fragment"));
const text = v.pipe(v.string(), v.maxLength(1000, "at most 1000 characters"));

/** The metadata fields besides those of the client model's JWT metadata (ClientJwtMetadataSchema). */
const BaseMetadataSchema = v.object({
  redirect_uris: v.optional(v.array(v.string("each redirect URI must be a string"), "redirect_uris must be an array of strings")),
  post_logout_redirect_uris: v.optional(v.array(webUri)),
  grant_types: v.optional(v.array(v.string())),
  response_types: v.optional(v.array(v.string())),
  application_type: v.optional(v.picklist(["web", "native"], 'expected "web" or "native"')),
  client_name: v.optional(text),
  client_uri: v.optional(webUri),
  logo_uri: v.optional(webUri),
  tos_uri: v.optional(webUri),
  policy_uri: v.optional(webUri),
  contacts: v.optional(v.array(text)),
  scope: v.optional(text),
  software_id: v.optional(text),
  software_version: v.optional(text),
  subject_type: v.optional(v.picklist(["public"], 'expected "public" (the only subject type)')),
  default_max_age: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  require_auth_time: v.optional(v.boolean()),
  initiate_login_uri: v.optional(v.pipe(v.string(), v.startsWith("https://", "expected an https URL"))),
  frontchannel_logout_uri: v.optional(webUri),
  frontchannel_logout_session_required: v.optional(v.boolean()),
  backchannel_logout_uri: v.optional(webUri),
  backchannel_logout_session_required: v.optional(v.boolean()),
  require_pushed_authorization_requests: v.optional(v.boolean()),
  /** Not in RFC 7591: preview-environment patterns (redirect-patterns.ts); never by open registration. */
  redirect_uri_patterns: v.optional(v.array(v.string())),
});

/** Unknown fields are dropped (RFC 7591 §2: the server ignores metadata it does not understand). */
const RegistrationMetadataSchema = v.intersect([BaseMetadataSchema, ClientJwtMetadataSchema]);
export type RegistrationMetadata = v.InferOutput<typeof RegistrationMetadataSchema>;

/**
 * The most a registered client's metadata may take, as JSON: ample for its URIs and inline keys.
 * Anyone may register under the open policy, so this times the store's ceiling of registered
 * clients (MAX_LIVE) bounds their memory (~160 MiB), where a 1 MiB body each would not.
 */
export const MAX_METADATA_CHARS = 16 * 1024;

/** Fields only the provider sets; a client sending them in an update is wrong (RFC 7592 §2.2). */
const SERVER_FIELDS = ["registration_access_token", "registration_client_uri", "client_id_issued_at", "client_secret_expires_at"];

interface RegistrationContext {
  /** Grant types the provider implements (discovery's list). */
  grantTypes: readonly string[];
  /**
   * Registered with the initial access token (an operator's decision): may have redirect URI
   * patterns and a back-channel logout URI beyond loopback.
   */
  trusted: boolean;
}

const metadataError = (description: string) => new OAuthError("invalid_client_metadata", description);
const redirectError = (description: string) => new OAuthError("invalid_redirect_uri", description);

/**
 * Why a redirect URI cannot be registered, or undefined (RFC 7591 §2, OIDC Registration §2,
 * RFC 8252 §7): absolute, no fragment; https, or http on a loopback host; for a native app also a
 * private-use scheme in reverse-domain form (`com.example.app:/callback`).
 */
export function redirectUriProblem(uri: string, applicationType: "web" | "native"): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "is not an absolute URI";
  }
  if (url.hash || uri.includes("#")) return "must not have a fragment";
  if (url.username || url.password) return "must not have user info";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:") return LOOPBACK_HOSTS.has(url.hostname) ? undefined : "http is allowed on loopback hosts only; use https";
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `the ${url.protocol} scheme is not a redirect target`;
  if (applicationType !== "native") return `a private-use scheme (${url.protocol}) needs application_type "native"`;
  if (!url.protocol.slice(0, -1).includes(".")) return "a private-use scheme must be a reverse domain name (RFC 8252 §7.1), e.g. com.example.app:/callback";
  return undefined;
}

/**
 * The registered metadata with the defaults of RFC 7591 §2 filled in, or `invalid_redirect_uri` /
 * `invalid_client_metadata` (400).
 */
export function validateRegistration(body: unknown, ctx: RegistrationContext): RegistrationMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw metadataError("the body must be a JSON object of client metadata");
  const parsed = v.safeParse(RegistrationMetadataSchema, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = v.getDotPath(issue) ?? "";
    const description = `${path ? `${path}: ` : ""}${issue.message}`;
    throw path.startsWith("redirect_uris") ? redirectError(description) : metadataError(description);
  }
  const m: RegistrationMetadata = { ...parsed.output };
  if (JSON.stringify(m).length > MAX_METADATA_CHARS) throw metadataError(`the client metadata exceed ${MAX_METADATA_CHARS} characters (as JSON)`);
  const applicationType = (m.application_type ??= "web");

  // Grant and response types must agree (RFC 7591 §2.1): code <-> authorization_code.
  const grants = (m.grant_types ??= ["authorization_code"]);
  const unknownGrant = grants.find((g) => !ctx.grantTypes.includes(g));
  if (unknownGrant !== undefined) throw metadataError(`grant_types: ${unknownGrant} is not supported (supported: ${ctx.grantTypes.join(", ")})`);
  const responses = (m.response_types ??= grants.includes("authorization_code") ? ["code"] : []);
  const unknownResponse = responses.find((r) => r !== "code");
  if (unknownResponse !== undefined) throw metadataError(`response_types: ${unknownResponse} is not supported (only code)`);
  if (responses.includes("code") !== grants.includes("authorization_code")) {
    throw metadataError("response_types code and grant_types authorization_code go together (RFC 7591 §2.1)");
  }

  if (grants.includes("authorization_code") && (m.redirect_uris ?? []).length === 0) {
    throw redirectError("redirect_uris: at least one is required for the authorization code grant");
  }
  for (const uri of m.redirect_uris ?? []) {
    const problem = redirectUriProblem(uri, applicationType);
    if (problem) throw redirectError(`redirect_uris: ${uri} ${problem}`);
  }
  if (m.redirect_uri_patterns !== undefined) {
    if (!ctx.trusted) {
      throw metadataError("redirect_uri_patterns can be registered only with the initial access token (registration policy token)");
    }
    for (const pattern of m.redirect_uri_patterns) {
      try {
        parseRedirectPattern(pattern);
      } catch (err) {
        if (err instanceof RedirectPatternError) throw redirectError(`redirect_uri_patterns: ${err.message}`);
        throw err;
      }
    }
  }

  // What the provider itself connects to: keys from loopback only (client-keys.ts); logout tokens
  // beyond loopback only for an operator's client, or open registration would let anyone make
  // the provider POST to any host it can reach.
  if (m.jwks_uri !== undefined && !isLoopbackUrl(m.jwks_uri)) throw metadataError("jwks_uri: the provider fetches keys from loopback URLs only; send jwks");
  if (m.backchannel_logout_uri !== undefined && !ctx.trusted && !isLoopbackUrl(m.backchannel_logout_uri)) {
    throw metadataError("backchannel_logout_uri: without the initial access token, only a loopback URL (localhost, 127.0.0.1, [::1])");
  }

  const method = (m.token_endpoint_auth_method ??= "client_secret_basic");
  if (!TOKEN_AUTH_METHODS.includes(method)) throw metadataError(`token_endpoint_auth_method ${method} is not supported`);
  if (method === "private_key_jwt" && !m.jwks && !m.jwks_uri) throw metadataError("private_key_jwt needs jwks or jwks_uri");
  if (method === "none" && grants.includes("client_credentials")) throw metadataError("client_credentials needs a client that authenticates (not none)");

  if (m.scope !== undefined && !m.scope.split(" ").every(isScopeToken)) throw metadataError("scope: expected space-separated scope tokens");
  return m;
}

/** Refuses an update body that names the client wrongly or sets what only the provider sets (RFC 7592 §2.2). */
export function checkUpdateBody(body: unknown, clientId: string, currentSecret: string | undefined): void {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw metadataError("the body must be a JSON object of client metadata");
  const fields = body as Record<string, unknown>;
  if (fields.client_id !== clientId) throw new OAuthError("invalid_request", "client_id must be sent and equal the client's id");
  const sent = SERVER_FIELDS.filter((f) => f in fields);
  if (sent.length > 0) throw new OAuthError("invalid_request", `${sent.join(", ")} must not be sent in an update`);
  const secret = fields.client_secret;
  if (secret !== undefined && (typeof secret !== "string" || currentSecret === undefined || !constantTimeEqual(secret, currentSecret))) {
    throw new OAuthError("invalid_request", "client_secret, if sent, must equal the client's current secret");
  }
}

/** A registered client as kept in the state store. */
export interface RegisteredClientRecord {
  client_id: string;
  client_secret?: string;
  /** Seconds since the epoch (RFC 7591 §3.2.1). */
  client_id_issued_at: number;
  /** base64url SHA-256 of the registration access token: the token itself is never stored. */
  registration_token_hash: string;
  /** Registered with the initial access token: may have redirect URI patterns (an operator's decision). */
  trusted?: boolean;
  metadata: RegistrationMetadata;
}

export const needsSecret = (m: RegistrationMetadata) => SECRET_METHODS.includes(m.token_endpoint_auth_method!);

export const hashRegistrationToken = (token: string) => sha256Base64url(token);

/** Is `token` this client's registration access token? (Compared by hash, in constant time.) */
export async function registrationTokenMatches(record: RegisteredClientRecord, token: string): Promise<boolean> {
  return constantTimeEqual(await hashRegistrationToken(token), record.registration_token_hash);
}

/** The client model of a registered client: its metadata by registered name (see the module comment). */
export function registeredClient(record: RegisteredClientRecord): Client {
  const { scope, ...metadata } = record.metadata;
  const config: ClientConfig = {
    ...(metadata as Omit<ClientConfig, "client_id" | "redirect_uris">),
    client_id: record.client_id,
    redirect_uris: metadata.redirect_uris ?? [],
  };
  if (record.client_secret !== undefined) config.client_secret = record.client_secret;
  else delete config.client_secret;
  if (scope !== undefined) config.allowed_scopes = scope.split(" ");
  return clientFromConfig(config);
}

/** The client information response (RFC 7591 §3.2.1, RFC 7592 §3). */
export function clientInformation(record: RegisteredClientRecord, registration: { token: string; uri: string }): Record<string, unknown> {
  const body: Record<string, unknown> = { client_id: record.client_id };
  if (record.client_secret !== undefined) {
    body.client_secret = record.client_secret;
    body.client_secret_expires_at = 0; // never
  }
  body.client_id_issued_at = record.client_id_issued_at;
  body.registration_access_token = registration.token;
  body.registration_client_uri = registration.uri;
  return { ...body, ...record.metadata };
}
