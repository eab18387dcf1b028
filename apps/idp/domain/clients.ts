/**
 * Registered clients: the three builtins, the configured client (merge rule of the spec) and extra
 * clients; client authentication at /token, /device_authorization, /introspect and /revoke.
 */
import { OAuthError } from "./errors.ts";
import { constantTimeEqual } from "./random.ts";

export interface ClientConfig {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  require_pkce?: boolean;
  allowed_scopes?: string[];
  grant_types?: string[];
  /** OpenID Connect Back-Channel Logout: where logout tokens are POSTed (domain/backchannel.ts). */
  backchannel_logout_uri?: string;
}

export interface Client {
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
}

export const DEFAULT_CLIENT_ID = "dev-client";
export const DEFAULT_REDIRECT_URIS = ["http://localhost:3000/callback", "http://127.0.0.1:3000/callback"];
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
  return client;
}

export interface ClientOptions {
  clientId?: string;
  clientSecret?: string;
  redirectUris?: string[];
  /** Post-logout redirect URIs of the configured client (`clientId`), added to its own. */
  postLogoutRedirectUris?: string[];
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
  for (const extra of options.clients ?? []) clients.set(extra.client_id, clientFromConfig(extra));
  return clients;
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
export const redirectUriAllowed = (client: Client, uri: string) => matchesRegistered(client.redirect_uris, uri);

/** A post-logout redirect URI as registered: exact, with the loopback rule of redirect URIs. */
export const postLogoutUriAllowed = (client: Client, uri: string) => matchesRegistered(client.post_logout_redirect_uris, uri);

export type AuthMethod = "client_secret_basic" | "client_secret_post" | "none";

export interface ClientCredentials {
  clientId?: string;
  secret?: string;
  method: AuthMethod;
}

/** Reads `Authorization: Basic` (RFC 6749 §2.3.1: form-encoded id and secret) and the body fields. */
export function readClientCredentials(authorization: string | undefined, form: Map<string, string>): ClientCredentials {
  const bodyId = form.get("client_id");
  const bodySecret = form.get("client_secret");
  if (authorization !== undefined && /^basic\s/i.test(authorization)) {
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
 * The authenticated client, or `invalid_client` (401): unknown client, or a confidential client
 * without its secret or with a wrong one (compared in constant time). A public client needs none.
 */
export function authenticateClient(clients: Map<string, Client>, credentials: ClientCredentials): Client {
  // No WWW-Authenticate on invalid_client: RPs (openid-client among them) read the JSON error
  // body only when no challenge header is present.
  const challenge: Record<string, string> = {};
  if (!credentials.clientId) throw new OAuthError("invalid_request", "client_id is required");
  const client = clients.get(credentials.clientId);
  if (!client) throw new OAuthError("invalid_client", "unknown client", 401, challenge);
  if (client.secret !== undefined) {
    if (credentials.secret === undefined) throw new OAuthError("invalid_client", "client authentication required", 401, challenge);
    if (!constantTimeEqual(credentials.secret, client.secret)) throw new OAuthError("invalid_client", "client authentication failed", 401, challenge);
  }
  return client;
}

export const allowsGrant = (client: Client, grant: string) => !client.grant_types || client.grant_types.has(grant);
