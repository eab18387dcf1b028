/**
 * Registered clients: the three builtins, the configured client (merge rule of the spec) and extra
 * clients; reading client credentials at /token, /device_authorization, /introspect and /revoke
 * (checking them: client-auth.ts).
 */
import type { JWK } from "jose";
import * as v from "valibot";
import { CLIENT_SIGNING_ALGS, SIGNING_ALGS } from "./algorithms.ts";
import { ClientConfigError, OAuthError } from "./errors.ts";
import { isRedirectPattern, matchesRedirectPattern, parseRedirectPattern, type RedirectPattern } from "./redirect-patterns.ts";
import { constantTimeEqual } from "./random.ts";

/** RFC 7591 §2 `token_endpoint_auth_method` values the provider implements. */
export const TOKEN_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none"] as const;
export type TokenAuthMethod = (typeof TOKEN_AUTH_METHODS)[number];

/** A public JWK set (`{keys:[...]}`) as registered in `jwks`. */
export interface JwkSet {
  keys: JWK[];
}

/**
 * Client metadata used for JWTs (RFC 7591 §2, OIDC Registration §2; exactly the registered names,
 * so dynamic registration takes them as they are).
 */
interface ClientJwtMetadata {
  token_endpoint_auth_method?: TokenAuthMethod;
  /** The alg client assertions must use (private_key_jwt, client_secret_jwt). */
  token_endpoint_auth_signing_alg?: string;
  /** The client's public keys: inline... */
  jwks?: JwkSet;
  /** ...or by reference (fetched from loopback URLs only; client-keys.ts). */
  jwks_uri?: string;
  /** The alg request objects must use; `none` allows unsigned ones. */
  request_object_signing_alg?: string;
  /** The alg of the client's ID tokens (and JWT access tokens); default RS256. */
  id_token_signed_response_alg?: string;
  /** When set, /userinfo answers this client with a JWT signed with it (application/jwt). */
  userinfo_signed_response_alg?: string;
}

/** OpenID Front-Channel Logout 1.0 §2 client metadata (routes/end-session.ts renders the frames). */
interface FrontchannelLogoutMetadata {
  /** Loaded in an iframe of the provider's logout page when a session the client got tokens in ends. */
  frontchannel_logout_uri?: string;
  /** Add `iss` and `sid` to that URI's query (default false, as in the specification). */
  frontchannel_logout_session_required?: boolean;
}

export interface ClientConfig extends ClientJwtMetadata, FrontchannelLogoutMetadata {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  require_pkce?: boolean;
  allowed_scopes?: string[];
  grant_types?: string[];
  /** OpenID Connect Back-Channel Logout: where logout tokens are POSTed (domain/backchannel.ts). */
  backchannel_logout_uri?: string;
  /** Opt-in redirect URI patterns for preview environments (redirect-patterns.ts). */
  redirect_uri_patterns?: string[];
  /** RFC 9126 §6: this client's authorization requests must come through /par. */
  require_pushed_authorization_requests?: boolean;
}

export interface Client extends ClientJwtMetadata, FrontchannelLogoutMetadata {
  client_id: string;
  /** Undefined for a public client. */
  secret?: string;
  redirect_uris: Set<string>;
  post_logout_redirect_uris: Set<string>;
  require_pkce: boolean;
  /** Undefined: any scope. */
  allowed_scopes?: Set<string>;
  /** Undefined: every grant the provider supports. */
  grant_types?: Set<string>;
  /** Redirect URI patterns (redirect-patterns.ts), checked after the exact URIs. */
  redirect_uri_patterns?: RedirectPattern[];
  /** RFC 9126 §6: authorization requests only through /par. */
  require_pushed_authorization_requests?: boolean;
}

const DEFAULT_CLIENT_ID = "dev-client";
const DEFAULT_REDIRECT_URIS = ["http://localhost:3000/callback", "http://127.0.0.1:3000/callback"];
/** The fixture secret of the builtin confidential client. */
export const WEB_APP_SECRET = "web-app-secret";

/** An app on port 8080: a SPA's `/callback`, and the route host's sign-in (`/auth/callback`). */
const SPA_REDIRECTS = [
  "http://localhost:8080/callback",
  "http://127.0.0.1:8080/callback",
  "http://localhost:8080/auth/callback",
  "http://127.0.0.1:8080/auth/callback",
];
const POST_LOGOUT_3000 = ["http://localhost:3000", "http://127.0.0.1:3000"];
const POST_LOGOUT_8080 = ["http://localhost:8080", "http://127.0.0.1:8080"];

/** The origins of configured redirect URIs: an app signed in there may come back after logout. */
export function originsOf(uris: Iterable<string>): string[] {
  return [...uris].flatMap((u) => {
    try {
      const origin = new URL(u).origin;
      return origin === "null" ? [] : [origin];
    } catch {
      return [];
    }
  });
}

function builtins(redirectUris: string[], configuredOrigins: string[]): Client[] {
  return [
    {
      client_id: "dev-client",
      redirect_uris: new Set(redirectUris),
      post_logout_redirect_uris: new Set([...POST_LOGOUT_3000, ...configuredOrigins]),
      require_pkce: false,
    },
    {
      client_id: "public-spa",
      redirect_uris: new Set([...redirectUris, ...SPA_REDIRECTS]),
      post_logout_redirect_uris: new Set([...POST_LOGOUT_8080, ...configuredOrigins]),
      require_pkce: true,
    },
    {
      client_id: "web-app",
      secret: WEB_APP_SECRET,
      redirect_uris: new Set([...redirectUris, ...SPA_REDIRECTS]),
      post_logout_redirect_uris: new Set([...POST_LOGOUT_8080, ...configuredOrigins]),
      require_pkce: false,
    },
  ];
}

export function clientFromConfig(config: ClientConfig): Client {
  const client: Client = {
    client_id: config.client_id,
    redirect_uris: new Set(config.redirect_uris),
    post_logout_redirect_uris: new Set(config.post_logout_redirect_uris ?? []),
    require_pkce: config.require_pkce ?? false,
  };
  if (config.client_secret) client.secret = config.client_secret;
  if (config.allowed_scopes) client.allowed_scopes = new Set(config.allowed_scopes);
  if (config.grant_types) client.grant_types = new Set(config.grant_types);
  if (config.redirect_uri_patterns?.length) client.redirect_uri_patterns = config.redirect_uri_patterns.map(parseRedirectPattern);
  if (config.require_pushed_authorization_requests) client.require_pushed_authorization_requests = true;
  if (config.frontchannel_logout_uri !== undefined) client.frontchannel_logout_uri = config.frontchannel_logout_uri;
  if (config.frontchannel_logout_session_required !== undefined) client.frontchannel_logout_session_required = config.frontchannel_logout_session_required;
  for (const name of JWT_METADATA) if (config[name] !== undefined) (client as unknown as Record<string, unknown>)[name] = config[name];
  return client;
}

const JWT_METADATA = [
  "token_endpoint_auth_method",
  "token_endpoint_auth_signing_alg",
  "jwks",
  "jwks_uri",
  "request_object_signing_alg",
  "id_token_signed_response_alg",
  "userinfo_signed_response_alg",
] as const satisfies readonly (keyof ClientJwtMetadata)[];

const httpUrl = v.pipe(
  v.string(),
  v.check((value: string) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && !url.hash;
    } catch {
      return false;
    }
  }, "expected an absolute http(s) URL without fragment"),
);
const redirectPatternValid = (value: string) => {
  try {
    parseRedirectPattern(value);
    return true;
  } catch {
    return false;
  }
};
/** Is this an absolute URL? (URL.canParse is missing from the Workers types.) */
export function isAbsoluteUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}
const uriList = v.array(v.pipe(v.string(), v.check(isAbsoluteUrl, "expected an absolute URL")));
const jwkSet = v.object({ keys: v.array(v.looseObject({ kty: v.string() })) });
const clientAlg = v.picklist(CLIENT_SIGNING_ALGS as string[], `expected one of ${CLIENT_SIGNING_ALGS.join(", ")}`);
const providerAlg = v.picklist([...SIGNING_ALGS], `expected one of ${SIGNING_ALGS.join(", ")}`);

/** The JWT metadata fields (their rules, shared with dynamic registration). */
export const ClientJwtMetadataSchema = v.pipe(
  v.object({
    token_endpoint_auth_method: v.optional(v.picklist([...TOKEN_AUTH_METHODS], `expected one of ${TOKEN_AUTH_METHODS.join(", ")}`)),
    token_endpoint_auth_signing_alg: v.optional(clientAlg),
    jwks: v.optional(jwkSet),
    jwks_uri: v.optional(httpUrl),
    request_object_signing_alg: v.optional(v.union([clientAlg, v.literal("none")], `expected none or one of ${CLIENT_SIGNING_ALGS.join(", ")}`)),
    id_token_signed_response_alg: v.optional(providerAlg),
    userinfo_signed_response_alg: v.optional(providerAlg),
  }),
  v.check((m) => !(m.jwks && m.jwks_uri), "jwks and jwks_uri must not both be given (RFC 7591 §2)"),
);

/** A configured client (env IDP_CLIENTS, `clients` option). */
const ClientConfigSchema = v.intersect([
  v.object({
    client_id: v.pipe(v.string(), v.nonEmpty("client_id must not be empty")),
    client_secret: v.optional(v.string()),
    redirect_uris: uriList,
    post_logout_redirect_uris: v.optional(uriList),
    require_pkce: v.optional(v.boolean()),
    allowed_scopes: v.optional(v.array(v.string())),
    grant_types: v.optional(v.array(v.string())),
    backchannel_logout_uri: v.optional(httpUrl),
    frontchannel_logout_uri: v.optional(httpUrl),
    frontchannel_logout_session_required: v.optional(v.boolean()),
    redirect_uri_patterns: v.optional(v.array(v.pipe(v.string(), v.check(redirectPatternValid, "expected https://*.<your domain>/path (one wildcard label)")))),
    require_pushed_authorization_requests: v.optional(v.boolean()),
  }),
  ClientJwtMetadataSchema,
]);

/** Validates a list of client configurations; the message names the first problem and where it is. */
export function parseClientConfigs(value: unknown): ClientConfig[] {
  const result = v.safeParse(v.array(ClientConfigSchema), value);
  if (!result.success) {
    const issue = result.issues[0];
    const path = v.getDotPath(issue) ?? "";
    throw new ClientConfigError(`${path ? `${path}: ` : ""}${issue.message}`);
  }
  for (const c of result.output) {
    const method = c.token_endpoint_auth_method;
    if ((method === "client_secret_jwt" || method === "client_secret_basic" || method === "client_secret_post") && !c.client_secret) {
      throw new ClientConfigError(`${c.client_id}: ${method} needs a client_secret`);
    }
    if (method === "private_key_jwt" && !c.jwks && !c.jwks_uri) throw new ClientConfigError(`${c.client_id}: private_key_jwt needs jwks or jwks_uri`);
  }
  return result.output as ClientConfig[];
}

interface ClientOptions {
  clientId?: string;
  clientSecret?: string;
  redirectUris?: string[];
  /** Post-logout redirect URIs of the configured client (`clientId`), added to its own. */
  postLogoutRedirectUris?: string[];
  /**
   * A preview deployment's redirect URIs, added to the configured client's (they do not replace
   * the list): exact URIs, or patterns with one wildcard label (redirect-patterns.ts).
   */
  previewRedirectUris?: string[];
  clients?: ClientConfig[];
}

/**
 * Builtins accept the configured redirect URIs. A configured client id equal to a builtin keeps
 * that builtin's PKCE rule, secret and scopes (redirect URIs are unioned); any other id registers
 * a permissive client (PKCE optional, any scope, post-logout to localhost:3000 and :8080) that is
 * confidential when a secret is configured. The origins of configured redirect URIs are valid
 * post-logout URIs of every client built here. Extra clients replace a client of the same id.
 */
export function buildClients(options: ClientOptions): Map<string, Client> {
  const configured = options.redirectUris && options.redirectUris.length > 0 ? options.redirectUris : undefined;
  const redirectUris = configured ?? DEFAULT_REDIRECT_URIS;
  const configuredOrigins = originsOf(configured ?? []);
  const clients = new Map(builtins(redirectUris, configuredOrigins).map((c) => [c.client_id, c]));
  const id = options.clientId?.trim() || DEFAULT_CLIENT_ID;
  if (!clients.has(id)) {
    const client: Client = {
      client_id: id,
      redirect_uris: new Set(redirectUris),
      post_logout_redirect_uris: new Set([...POST_LOGOUT_3000, ...POST_LOGOUT_8080, ...configuredOrigins]),
      require_pkce: false,
    };
    if (options.clientSecret) client.secret = options.clientSecret;
    clients.set(id, client);
  }
  for (const uri of options.postLogoutRedirectUris ?? []) clients.get(id)!.post_logout_redirect_uris.add(uri);
  addPreviewRedirectUris(clients.get(id)!, options.previewRedirectUris ?? []);
  for (const extra of options.clients ?? []) clients.set(extra.client_id, clientFromConfig(extra));
  return clients;
}

/** Exact URIs join the client's list (their origins its post-logout URIs); patterns its patterns. */
function addPreviewRedirectUris(client: Client, entries: string[]): void {
  for (const entry of entries) {
    if (isRedirectPattern(entry)) (client.redirect_uri_patterns ??= []).push(parseRedirectPattern(entry));
    else {
      client.redirect_uris.add(entry);
      for (const origin of originsOf([entry])) client.post_logout_redirect_uris.add(origin);
    }
  }
}

/**
 * RFC 8252 §7.3: a redirect URI on a loopback IP literal (`127.0.0.1`, `[::1]`) stands for every
 * port, so a native app or a dev server may listen wherever it can. The URI without its port,
 * for such a URI with a valid port (or none); undefined for any other URI, which must match
 * exactly. (`localhost` is a name, not a literal: RFC 8252 §8.3; it stays exact.)
 */
export function loopbackKey(uri: string): string | undefined {
  const m = /^(https?:\/\/(?:127\.0\.0\.1|\[::1\]))(?::(\d{1,5}))?([/?][^#]*)?$/.exec(uri);
  if (!m || (m[2] !== undefined && Number(m[2]) > 65535)) return undefined;
  return m[1]! + (m[3] ?? "");
}

/** Is `uri` one of `registered`: the same string, or a loopback literal's URI on another port? */
function matchesRegistered(registered: Set<string>, uri: string): boolean {
  if (registered.has(uri)) return true;
  const key = loopbackKey(uri);
  if (key === undefined) return false;
  for (const r of registered) if (loopbackKey(r) === key) return true;
  return false;
}

/** Exact string match against the client's own allowlist, with the loopback rule (RFC 8252 §7.3). */
export const redirectUriAllowed = (client: Client, uri: string) =>
  matchesRegistered(client.redirect_uris, uri) || (client.redirect_uri_patterns?.some((p) => matchesRedirectPattern(p, uri)) ?? false);

/** A post-logout redirect URI as registered: exact, with the loopback rule of redirect URIs. */
export const postLogoutUriAllowed = (client: Client, uri: string) => matchesRegistered(client.post_logout_redirect_uris, uri);

/** How a request authenticated its client: `jwt` is a client assertion (checked in client-auth.ts). */
export type AuthMethod = "client_secret_basic" | "client_secret_post" | "none" | "jwt";

/** RFC 7523 §2.2: the only client assertion type. */
export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

export interface ClientCredentials {
  clientId?: string;
  secret?: string;
  /** A client assertion (RFC 7521 §4.2), when `method` is `jwt`. */
  assertion?: string;
  method: AuthMethod;
}

/**
 * Reads `Authorization: Basic` (RFC 6749 §2.3.1: form-encoded id and secret), the body's secret or
 * a client assertion (`client_assertion` with its type). More than one method is `invalid_request`.
 */
export function readClientCredentials(authorization: string | undefined, form: Map<string, string>): ClientCredentials {
  const bodyId = form.get("client_id");
  const bodySecret = form.get("client_secret");
  const assertion = form.get("client_assertion");
  const assertionType = form.get("client_assertion_type");
  const basic = authorization !== undefined && /^basic\s/i.test(authorization);
  if (assertion !== undefined || assertionType !== undefined) {
    if (basic || bodySecret !== undefined) throw new OAuthError("invalid_request", "use only one client authentication method");
    if (assertion === undefined || assertionType === undefined) {
      throw new OAuthError("invalid_request", "client_assertion and client_assertion_type go together");
    }
    if (assertionType !== JWT_BEARER_ASSERTION_TYPE) throw new OAuthError("invalid_request", `client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`);
    return { clientId: bodyId, assertion, method: "jwt" };
  }
  if (basic) {
    if (bodySecret !== undefined) throw new OAuthError("invalid_request", "use only one client authentication method");
    let decoded: string;
    try {
      decoded = atob(authorization.slice(6).trim());
    } catch {
      throw new OAuthError("invalid_client", "malformed Basic credentials", 401);
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "malformed Basic credentials", 401);
    let id: string;
    let secret: string;
    try {
      id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "));
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "));
    } catch {
      throw new OAuthError("invalid_client", "malformed Basic credentials", 401);
    }
    if (bodyId !== undefined && bodyId !== id) throw new OAuthError("invalid_request", "client_id differs from the Basic credentials");
    return { clientId: id, secret, method: "client_secret_basic" };
  }
  if (bodySecret !== undefined) return { clientId: bodyId, secret: bodySecret, method: "client_secret_post" };
  return { clientId: bodyId, method: "none" };
}

/**
 * The methods a client may authenticate with: the registered `token_endpoint_auth_method`, else
 * what it has: a secret (basic, post or client_secret_jwt), keys (private_key_jwt), or nothing.
 */
export function authMethodsOf(client: Client): Set<TokenAuthMethod> {
  if (client.token_endpoint_auth_method) return new Set([client.token_endpoint_auth_method]);
  const methods = new Set<TokenAuthMethod>();
  if (client.secret !== undefined) ["client_secret_basic", "client_secret_post", "client_secret_jwt"].forEach((m) => methods.add(m as TokenAuthMethod));
  if (client.jwks || client.jwks_uri) methods.add("private_key_jwt");
  if (methods.size === 0) methods.add("none");
  return methods;
}

/** A client that authenticates (a secret or keys), as opposed to a public one. */
export const isConfidential = (client: Client) => !authMethodsOf(client).has("none");

/** `invalid_client` (401). No WWW-Authenticate: RPs (openid-client among them) read the JSON error
 * body only when no challenge header is present. */
export const invalidClient = (description: string) => new OAuthError("invalid_client", description, 401, {});

/**
 * The authenticated client for a secret or no credentials (a client assertion: client-auth.ts),
 * or `invalid_client` (401): unknown client, a method the client may not use, or a confidential
 * client without its secret or with a wrong one (compared in constant time).
 */
export function authenticateClient(clients: ReadonlyMap<string, Client>, credentials: ClientCredentials): Client {
  if (!credentials.clientId) throw new OAuthError("invalid_request", "client_id is required");
  const client = clients.get(credentials.clientId);
  if (!client) throw invalidClient("unknown client");
  const methods = authMethodsOf(client);
  if (credentials.method === "jwt") throw invalidClient("client assertion not checked"); // client-auth.ts checks them
  // A public client registered without a method ignores a secret sent anyway (as it always has).
  const plainPublic = client.secret === undefined && !client.token_endpoint_auth_method && methods.has("none");
  if (!plainPublic && !methods.has(credentials.method)) {
    throw invalidClient(
      credentials.method === "none"
        ? "client authentication required"
        : `the client authenticates with ${[...methods].join(" or ")}, not ${credentials.method}`,
    );
  }
  if (client.secret !== undefined && !constantTimeEqual(credentials.secret ?? "", client.secret)) throw invalidClient("client authentication failed");
  return client;
}

export const allowsGrant = (client: Client, grant: string) => !client.grant_types || client.grant_types.has(grant);
