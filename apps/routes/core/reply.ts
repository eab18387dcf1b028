/**
 * The host's own answers: `HostReply` is an HTTP error on the pipeline path (status, stable code,
 * message; the audit reason when it is a denial), `errorResponse` its JSON envelope. One place
 * turns them into responses (`replyResponse`), so dev mode and logging are decided once.
 */
import { CodedError } from "#lib/errors";
import { errorEnvelope } from "#lib/http";
import type { Logger } from "#lib/log";
import { hostError } from "./error-page.ts";
import type { BodyErrorCode } from "./request.ts";

type HostReplyStatus = 400 | 401 | 403 | 404 | 405 | 413 | 429 | 500;

/** Every `error.code` the host itself answers with. */
export type HostErrorCode =
  | BodyErrorCode
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "CSRF_FAILED"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "RATE_LIMITED"
  | "RAW_ROUTES_DISABLED"
  | "SERVICE_MISSING"
  | "NO_RUNTIME"
  | "HANDLER_FAILED"
  | "INTERNAL";

export class HostReply extends CodedError<HostErrorCode> {
  constructor(
    readonly status: HostReplyStatus,
    code: HostErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Why the request was denied, for the audit record (a denial, not a failure). */
    readonly auditReason?: string,
  ) {
    super(code, message);
  }
}

export function errorResponse(status: number, code: HostErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return hostError(new Response(JSON.stringify(errorEnvelope(code, message)), { status, headers: { "content-type": "application/json", ...headers } }));
}

interface ReplyContext {
  dev: boolean;
  log?: Logger;
  requestId: string;
  route?: string;
}

/** Any error thrown on a route as its response: a HostReply as itself (a 500's message only in dev),
 * anything else a logged 500. */
export function replyResponse(err: unknown, at: ReplyContext): Response {
  if (err instanceof HostReply) {
    if (err.status === 500) at.log?.error("route refused", { request_id: at.requestId, route: at.route, error: err.message });
    const hidden = err.status === 500 && !at.dev;
    return errorResponse(err.status, hidden ? "INTERNAL" : err.code, hidden ? "internal error" : err.message, err.headers);
  }
  return internalError(err instanceof Error ? err.message : String(err), at);
}

export function internalError(message: string, at: ReplyContext): Response {
  at.log?.error("route failed", { request_id: at.requestId, error: message, ...(at.route ? { route: at.route } : {}) });
  return errorResponse(500, "INTERNAL", at.dev ? message : "internal error");
}

/** Whether a response already sets the cookie `name` (Set-Cookie lines read as one, joined by ", "). */
export function setsCookie(response: Response, name: string): boolean {
  const all = response.headers.get("set-cookie");
  return all !== null && (all.startsWith(`${name}=`) || all.includes(`, ${name}=`));
}
