/**
 * Typed API errors. Domain code throws these; one error handler turns them into the
 * `{error:{code,message,details?}}` envelope, so nothing below the routes knows about HTTP bodies.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly details?: ErrorDetails;

  constructor(status: ContentfulStatusCode, code: string, message: string, details?: ErrorDetails) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The error shape shared by the JSON APIs (`decisions.md`: stable `code`, human `message`). */
export interface ErrorEnvelope {
  error: { code: string; message: string; details?: ErrorDetails };
}

export function errorEnvelope(code: string, message: string, details?: ErrorDetails): ErrorEnvelope {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

/**
 * Hono `onError` handler: ApiErrors become their envelope, anything else a logged 500 `INTERNAL`
 * whose message does not leak internals.
 */
export function apiErrorHandler(onUnexpected?: (err: unknown, c: Context) => void) {
  return (err: Error, c: Context): Response => {
    if (err instanceof ApiError) {
      return c.json(errorEnvelope(err.code, err.message, err.details), err.status);
    }
    onUnexpected?.(err, c);
    return c.json(errorEnvelope("INTERNAL", "internal error"), 500);
  };
}

/** Hono `notFound` handler for JSON APIs. */
export function apiNotFound(c: Context): Response {
  return c.json(errorEnvelope("NOT_FOUND", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404);
}
