/**
 * `X-Request-Id` on every response: a well-formed incoming id is echoed (so a caller can correlate
 * its own logs), anything else is replaced by a fresh UUID.
 */
import type { MiddlewareHandler } from "hono";

export const REQUEST_ID_HEADER = "X-Request-Id";
const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

export type RequestIdVariables = { requestId: string };

export function requestId(): MiddlewareHandler<{ Variables: RequestIdVariables }> {
  return async (c, next) => {
    const incoming = c.req.header(REQUEST_ID_HEADER);
    const id = incoming && WELL_FORMED.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", id);
    c.header(REQUEST_ID_HEADER, id);
    await next();
    // Handlers that build their own Response (streams, redirects) still carry the header.
    if (!c.res.headers.has(REQUEST_ID_HEADER)) c.res.headers.set(REQUEST_ID_HEADER, id);
  };
}
