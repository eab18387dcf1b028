/**
 * Typed errors of the provider. `OAuthError` becomes the JSON `{error, error_description}` body
 * (decisions.md: 401 invalid_client, 400 the rest, 500 server_error); `PageError` a small HTML page
 * for browser-facing endpoints when the client cannot be redirected to; `AuthorizeRedirectError`
 * goes back to a validated redirect URI.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status: 400 | 401 | 403 | 500 = error === "invalid_client" ? 401 : error === "server_error" ? 500 : 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
    this.name = "OAuthError";
  }
}

export class PageError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404,
    readonly title: string,
    message: string,
  ) {
    super(message);
    this.name = "PageError";
  }
}

/** An authorization error sent to the client's (already validated) redirect URI. */
export class AuthorizeRedirectError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
    this.name = "AuthorizeRedirectError";
  }
}

/** A users document (file, env var or debug body) that does not validate. */
export class UsersDocumentError extends Error {
  readonly code = "INVALID_USERS";
  constructor(
    message: string,
    readonly issues: { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = "UsersDocumentError";
  }
}

/** Signing keys given in configuration that cannot be used. */
export class SigningKeysError extends Error {
  readonly code = "INVALID_SIGNING_KEYS";
  constructor(message: string) {
    super(message);
    this.name = "SigningKeysError";
  }
}
