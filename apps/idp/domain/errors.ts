/**
 * Typed errors of the provider. `OAuthError` becomes the JSON `{error, error_description}` body
 * (docs/idp.md#errors: 401 invalid_client, 400 the rest, 500 server_error); `PageError` a small HTML page
 * for browser-facing endpoints when the client cannot be redirected to; `AuthorizeRedirectError`
 * goes back to a validated redirect URI. Each has its code union below; the provider's one error
 * handler (`errorHandler` in app.ts) turns them into answers.
 */
import { CodedError } from "#lib/errors";

/** The OAuth `error` values the provider answers with (RFC 6749 §5.2, 8628, 8693, 9449). */
export type OAuthErrorCode =
  | "access_denied"
  | "authorization_pending"
  | "expired_token"
  | "invalid_client"
  /** RFC 7591 §3.2.2: registration metadata that cannot be accepted. */
  | "invalid_client_metadata"
  | "invalid_dpop_proof"
  | "invalid_grant"
  /** RFC 7591 §3.2.2: a redirect URI that cannot be registered. */
  | "invalid_redirect_uri"
  | "invalid_request"
  | "invalid_scope"
  | "invalid_target"
  /** RFC 6750 §3.1: a registration access token that is unknown (RFC 7592 §3). */
  | "invalid_token"
  | "server_error"
  | "slow_down"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_token_type";

export class OAuthError extends CodedError<OAuthErrorCode> {
  /** The body's `error` member: the code. */
  readonly error: OAuthErrorCode = this.code;
  constructor(
    code: OAuthErrorCode,
    readonly description: string,
    readonly status: 400 | 401 | 403 | 500 = code === "invalid_client" ? 401 : code === "server_error" ? 500 : 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(code, `${code}: ${description}`);
  }
}

/** A page error's code, from its status (the page shows the title and message, not the code). */
export type PageErrorCode = "invalid_request" | "unauthorized" | "forbidden" | "not_found";
const PAGE_ERROR_CODE = { 400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found" } as const;

export class PageError extends CodedError<PageErrorCode> {
  constructor(
    readonly status: 400 | 401 | 403 | 404,
    readonly title: string,
    message: string,
  ) {
    super(PAGE_ERROR_CODE[status], message);
  }
}

/** The authorization errors a scenario acts out (scenarios.ts). */
export type AuthorizeFailure = "access_denied" | "login_required" | "consent_required" | "server_error";

/** The `error` values sent to a redirect URI (RFC 6749 §4.1.2.1, OIDC Core §3.1.2.6). */
export type AuthorizeRedirectErrorCode =
  | "invalid_request"
  | "invalid_request_object"
  | "invalid_scope"
  | "request_uri_not_supported"
  | "unauthorized_client"
  | "unsupported_response_mode"
  | "unsupported_response_type"
  /** OpenID Connect Unmet Authentication Requirements 1.0: an essential acr the login did not meet. */
  | "unmet_authentication_requirements"
  | AuthorizeFailure;

/** An authorization error sent to the client's (already validated) redirect URI. */
export class AuthorizeRedirectError extends CodedError<AuthorizeRedirectErrorCode> {
  /** The redirect's `error` parameter: the code. */
  readonly error: AuthorizeRedirectErrorCode = this.code;
  constructor(
    code: AuthorizeRedirectErrorCode,
    readonly description: string,
  ) {
    super(code, `${code}: ${description}`);
  }
}

export type UsersDocumentErrorCode = "INVALID_USERS";

/** A users document (file, env var or debug body) that does not validate. */
export class UsersDocumentError extends CodedError<UsersDocumentErrorCode> {
  constructor(
    message: string,
    readonly issues: { path: string; message: string }[] = [],
  ) {
    super("INVALID_USERS", message);
  }
}

export type SigningKeysErrorCode = "INVALID_SIGNING_KEYS";

/** Signing keys given in configuration that cannot be used. */
export class SigningKeysError extends CodedError<SigningKeysErrorCode> {
  constructor(message: string) {
    super("INVALID_SIGNING_KEYS", message);
  }
}

export type ClientConfigErrorCode = "INVALID_CLIENTS";

/** Configured clients (IDP_CLIENTS, the `clients` option) that do not validate. */
export class ClientConfigError extends CodedError<ClientConfigErrorCode> {
  constructor(message: string) {
    super("INVALID_CLIENTS", message);
  }
}

export type TrustedIssuersErrorCode = "INVALID_JWT_BEARER_ISSUERS";

/** Trusted issuers of the JWT bearer grant (IDP_JWT_BEARER_ISSUERS) that do not validate. */
export class TrustedIssuersError extends CodedError<TrustedIssuersErrorCode> {
  constructor(message: string) {
    super("INVALID_JWT_BEARER_ISSUERS", message);
  }
}
