/**
 * `X-Request-Id` on every response, and the access log.
 *
 * A well-formed incoming id is echoed (so a caller can correlate its own logs), anything else is
 * replaced by a fresh UUID. With a logger, one line per request goes to it after the response,
 * with that id. Both live in one middleware because each async middleware layer is a measurable
 * part of a cheap request's cost on Node (docs/benchmarks.md, JWKS).
 *
 * An adapter may choose the id and set the header on its native response instead, passing the id
 * as `env.requestId` (lib/runtime.ts, ServeEnv): the Node adapter does, because reading one
 * request header and adding one response header through web `Headers` on @hono/node-server
 * costs a third of a cheap request's CPU there (measured: /jwks 31-35 µs -> 22-24 µs without).
 */
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../log.ts";
import type { ServeEnv } from "../runtime.ts";

export const REQUEST_ID_HEADER = "X-Request-Id";
const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

export type RequestIdVariables = { requestId: string };

/** The id for a request that came with `incoming` as its `X-Request-Id` (or none). */
export function chooseRequestId(incoming: string | null | undefined): string {
  return incoming && WELL_FORMED.test(incoming) ? incoming : crypto.randomUUID();
}

export interface RequestIdOptions {
  /** Receives one `info` line per request: request id, method, path (no query), status, duration. */
  accessLog?: Logger;
}

export function requestId(options: RequestIdOptions = {}): MiddlewareHandler<{ Variables: RequestIdVariables }> {
  const log = options.accessLog;
  return async (c, next) => {
    const started = log?.enabled("info") ? performance.now() : undefined;
    const preset = (c.env as ServeEnv | undefined)?.requestId;
    const id = preset ?? chooseRequestId(c.req.header(REQUEST_ID_HEADER));
    c.set("requestId", id);
    if (preset === undefined) c.header(REQUEST_ID_HEADER, id);
    await next();
    // Handlers that build their own Response (streams, redirects) still carry the header.
    if (preset === undefined && !c.res.headers.has(REQUEST_ID_HEADER)) c.res.headers.set(REQUEST_ID_HEADER, id);
    if (started !== undefined) {
      log!.info("request", {
        request_id: id,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
      });
    }
  };
}
