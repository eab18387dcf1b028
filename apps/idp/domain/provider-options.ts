/**
 * What configures a provider (its options, the issuer URL and the names of issuers by path) and
 * the bounds on its state. The provider itself, the runtime context, is in provider.ts.
 */
import type { Logger } from "#lib/log";
import type { IdpStateStore, StateKind } from "../state/store.ts";
import type { ClientConfig } from "./clients.ts";
import type { TrustedIssuer } from "./trusted-issuers.ts";
import type { RandomBytes } from "./random.ts";
import type { RequestLog } from "./request-log.ts";
import type { ClaimMapping } from "./claim-mappings.ts";
import type { RegistrationPolicy } from "./registration.ts";

export interface ProviderOptions {
  /** Issuer URL; `{origin}` is replaced by the origin of each request. */
  issuer: string;
  clientId?: string;
  clientSecret?: string;
  redirectUris?: string[];
  /** Post-logout redirect URIs of the configured client. */
  postLogoutRedirectUris?: string[];
  /** Origins allowed to read answers from a page beyond the redirect URIs' (`*`: any). */
  corsOrigins?: string[];
  users?: unknown;
  clients?: ClientConfig[];
  /** Issuers whose assertions the JWT bearer grant accepts (jwt-bearer.ts). */
  jwtBearerIssuers?: TrustedIssuer[];
  signingKeys?: unknown;
  state: IdpStateStore;
  now: () => number;
  random?: RandomBytes;
  sleep: (ms: number) => Promise<void>;
  tokenSlowMs: number;
  jwksSlowMs: number;
  /** Access tokens: opaque (the spec's default) or signed JWTs (RFC 9068) that a resource server
   * can verify against /jwks without calling back. */
  accessTokenFormat?: AccessTokenFormat;
  /** `aud` of JWT access tokens (default: the client id). */
  accessTokenAudience?: string;
  /** Back-channel logout URIs by client id (backchannel.ts). */
  backchannelLogoutUris?: Record<string, string>;
  /** Timeout of one back-channel logout POST (default 5000 ms). */
  backchannelTimeoutMs?: number;
  /** Await back-channel logout POSTs within the request (a runtime that may end work a response left behind). */
  awaitDeliveries?: boolean;
  /** The debug interface's access token (routes/debug.ts); none: loopback callers need none. */
  debugToken?: string;
  /** The requests received, for GET /debug/requests (one per instance, shared by its issuers by path). */
  requestLog?: RequestLog;
  /** Claims from configuration per client, scope or subject (claim-mappings.ts). */
  claimMappings?: ClaimMapping[];
  /**
   * Dynamic client registration (RFC 7591): open, token (with `registrationToken`) or off.
   * Undefined: open while the issuer a request is answered for is on a loopback host, else off.
   */
  registration?: RegistrationPolicy;
  /** The initial access token of registration policy `token`. */
  registrationToken?: string;
  /** RFC 9126 §5: every authorization request must come through /par. */
  requirePushedAuthorizationRequests?: boolean;
  /** Redirect URIs and patterns of a preview deployment, added to the configured client's (clients.ts). */
  previewRedirectUris?: string[];
  /**
   * Runs a function once the I/O callbacks of this turn of the event loop are done (Node and
   * Deno: `setImmediate`). With a shared store, the requests that arrive in one turn then share
   * one read of the settings; without it each request reads them.
   */
  afterThisTurn?: (run: () => void) => void;
  logger: Logger;
}

export type AccessTokenFormat = "opaque" | "jwt";

/** In an issuer template, replaced by the origin of each request. */
export const ORIGIN = "{origin}";

/**
 * Most live records kept per kind, whatever their lifetime: beyond it the oldest go first. Pruning
 * bounds memory over time; this bounds it under a burst (a load test makes 24-hour sessions and
 * 1-hour tokens far faster than they expire). Generous for any development use.
 */
export const MAX_LIVE: Partial<Record<StateKind, number>> = {
  session: 10_000,
  code: 10_000,
  used_code: 10_000,
  used_refresh_token: 20_000,
  revoked_grant: 10_000,
  access_token: 20_000,
  refresh_token: 20_000,
  device_grant: 10_000,
  user_code: 10_000,
  replay: 20_000,
  logout_client: 10_000,
  client: 10_000,
  pushed_request: 10_000,
};

/** What may name an issuer by path (one path segment). */
export const PATH_ISSUER_NAME = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/;

export function issuerPathOf(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer.replace(ORIGIN, "http://origin.invalid"));
  } catch {
    throw new Error(`invalid issuer URL "${issuer}"`);
  }
  if (url.search || url.hash) throw new Error(`issuer "${issuer}" must not have a query or fragment`);
  return url.pathname.replace(/\/+$/, "");
}
