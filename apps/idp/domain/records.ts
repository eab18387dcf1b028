/** The records the provider keeps in its state store (times in provider-clock milliseconds). */
import type { LoginClaims } from "./claims.ts";
import type { AuthContext, ClaimsRequest } from "./claims-request.ts";

/** Lifetimes (docs/idp.md#lifetimes-and-limits). */
export const LIFETIME_MS = {
  code: 5 * 60_000,
  accessToken: 3600_000,
  idToken: 3600_000,
  refreshToken: 24 * 3600_000,
  session: 24 * 3600_000,
  deviceGrant: 10 * 60_000,
  replay: 2 * 5 * 60_000,
} as const;
export const DEVICE_INTERVAL_S = 5;
export const SLOW_DOWN_STEP_S = 5;
/** Expired device grants stay this long so polling says `expired_token` rather than `invalid_grant`. */
export const EXPIRED_GRANT_GRACE_MS = 10 * 60_000;

export interface SessionRecord extends AuthContext {
  login: string;
  sub: string;
  auth_time: number;
  expires_at: number;
  /** The session's id in ID tokens and logout tokens (not the cookie's value). */
  sid?: string;
  /** Extra claims typed at login, carried into every code of the session (claims.ts). */
  claims?: LoginClaims;
}

/** A client to notify when a session ends (backchannel.ts, frontchannel.ts). */
export interface LogoutClientRecord {
  /** The issuer the client's tokens came from (an issuer by path has its own). */
  iss: string;
  sid: string;
  sub: string;
  client_id: string;
  /** When the session expires (provider clock). */
  expires_at: number;
}

export interface CodeRecord extends AuthContext {
  client_id: string;
  redirect_uri: string;
  scope: string;
  nonce?: string;
  code_challenge?: string;
  code_challenge_method?: "S256" | "plain";
  dpop_jkt?: string;
  login: string;
  sub: string;
  auth_time: number;
  grant_id: string;
  expires_at: number;
  /** The session the code was issued in (back-channel logout). */
  sid?: string;
  claims?: LoginClaims;
  /** The request's `claims` parameter (claims-request.ts). */
  claims_request?: ClaimsRequest;
}

/** The grant id of a redeemed code, remembered until it would have expired, so a replay can revoke its tokens. */
export type UsedCodeRecord = string;

/**
 * The grant id of a rotated refresh token, remembered until the token would have expired, so a
 * reuse can revoke its grant (RFC 9700 §4.14.2).
 */
export type UsedRefreshRecord = string;

/** A revoked grant: token requests of the grant that were storing tokens meanwhile undo them (issue.ts). */
export type RevokedGrantRecord = true;

export interface AccessTokenRecord {
  client_id: string;
  sub: string;
  /** Absent for client_credentials tokens (no user). */
  login?: string;
  /** The login's extra claims, for /userinfo. */
  claims?: LoginClaims;
  /** Authentication context claims the claims request asked userinfo for (claims-request.ts). */
  userinfo_context?: Record<string, unknown>;
  scope: string;
  jkt?: string;
  grant_id: string;
  issued_at: number;
  expires_at: number;
}

export interface RefreshTokenRecord extends AuthContext {
  client_id: string;
  sub: string;
  login: string;
  claims?: LoginClaims;
  scope: string;
  jkt?: string;
  grant_id: string;
  auth_time: number;
  issued_at: number;
  expires_at: number;
  /** The session of the grant: refreshed ID tokens keep its `sid`. */
  sid?: string;
  claims_request?: ClaimsRequest;
}

export type DeviceGrantStatus = "pending" | "approved" | "denied";

export interface DeviceGrantRecord {
  client_id: string;
  scope: string;
  user_code: string;
  status: DeviceGrantStatus;
  interval: number;
  last_poll?: number;
  login?: string;
  sub?: string;
  auth_time?: number;
  expires_at: number;
}

export type JwksMode = "normal" | "500" | "slow" | "empty";
export const JWKS_MODES: readonly JwksMode[] = ["normal", "500", "slow", "empty"];
