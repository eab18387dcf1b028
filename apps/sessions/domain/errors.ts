/**
 * The session service's error codes and their HTTP statuses, in one table: the routes' error
 * handler, the OpenAPI document and docs/sessions.md all read it. Domain code throws
 * `SessionServiceError` with a code; it never picks a status itself.
 */
import { CodedError } from "#lib/errors";
import { type LiveErrorCode, LiveRuntimeError } from "../live/types.ts";

export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  CROSS_SITE_REQUEST: 403,
  TEMPLATE_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  EXECUTION_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  MODULE_NOT_FOUND: 404,
  LIBRARY_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  SESSION_NOT_READY: 409,
  SESSION_BUSY: 409,
  EXECUTION_NOT_RUNNING: 409,
  PAYLOAD_TOO_LARGE: 413,
  INVALID_PATH: 422,
  OUTPUT_LIMIT_EXCEEDED: 422,
  STARTUP_MODE_UNSUPPORTED: 422,
  MODULE_NOT_ALLOWED: 422,
  LIBRARY_NOT_AVAILABLE: 422,
  STARTUP_FAILED: 422,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class SessionServiceError extends CodedError<ErrorCode> {
  constructor(
    code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Headers the answer needs (`Allow` on a 405). */
    readonly headers?: Record<string, string>,
  ) {
    super(code, message);
  }
}

export const templateNotFound = (id: string) => new SessionServiceError("TEMPLATE_NOT_FOUND", `template ${id} not found`);
export const sessionNotFound = (id: string) => new SessionServiceError("SESSION_NOT_FOUND", `session ${id} not found`);
export const executionNotFound = (id: string) => new SessionServiceError("EXECUTION_NOT_FOUND", `execution ${id} not found`);
export const conflict = (message: string) => new SessionServiceError("CONFLICT", message);

/** The code of a live-layer failure. Runtimes on other threads may rebuild the error rather than
 * pass the instance, so the name counts as much as the class. */
export function liveErrorCode(err: unknown): LiveErrorCode | undefined {
  if (err instanceof LiveRuntimeError) return err.code;
  const e = err as { name?: unknown; code?: unknown } | null | undefined;
  return e?.name === "LiveRuntimeError" && typeof e.code === "string" ? (e.code as LiveErrorCode) : undefined;
}
