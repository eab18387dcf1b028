/**
 * Typed API errors. Domain code throws these; one error handler turns them into the
 * `{error:{code,message,details?}}` envelope, so nothing below the routes knows about HTTP bodies.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CodedError } from "#lib/errors";

export type ErrorDetails = Record<string, unknown>;

/** An error already in HTTP terms: status, envelope code, and any headers the answer needs (a
 * service's error handler builds these from its domain errors; `C` is the service's code union). */
export class ApiError<C extends string = string> extends CodedError<C> {
  constructor(
    readonly status: ContentfulStatusCode,
    code: C,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(code, message);
  }
}

/** The error shape shared by the JSON APIs (docs/sessions.md#errors: stable `code`, human `message`). */
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
      return c.json(errorEnvelope(err.code, err.message, err.details), err.status, err.headers);
    }
    onUnexpected?.(err, c);
    return c.json(errorEnvelope("INTERNAL", "internal error"), 500);
  };
}

/** Hono `notFound` handler for JSON APIs. */
export function apiNotFound(c: Context): Response {
  return c.json(errorEnvelope("NOT_FOUND", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404);
}
