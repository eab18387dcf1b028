/**
 * `X-Request-Id` on every response, and the access log.
 *
 * A well-formed incoming id is echoed (so a caller can correlate its own logs), anything else is
 * replaced by a fresh UUID. With a logger, one line per request goes to it after the response,
 * with that id. Handlers read the id as `c.env.requestId` (ServeEnv).
 *
 * The id is chosen once per request, by this module's rule (`chooseRequestId`), at the entry:
 * `withRequestId`, or an adapter that marks its native response (below). Whatever comes after
 * takes it from `env.requestId` (`requestIdOf`, which chooses only for a caller that went around
 * both, such as a test calling a host's `fetch` directly).
 *
 * This wraps the app's `fetch` rather than being a Hono middleware: any middleware makes Hono's
 * dispatch asynchronous, and a handler that answers synchronously then loses @hono/node-server's
 * synchronous response path. On /jwks that was 32,000 against 40,000 requests per second
 * (docs/benchmarks.md). `app.fetch` itself is replaced, so `app.request` in tests behaves the same.
 *
 * An adapter may choose the id and set the header on its native response instead, passing the id
 * as `env.requestId` (lib/runtime.ts, ServeEnv): the Node adapter does, because reading one
 * request header and adding one response header through web `Headers` on @hono/node-server
 * costs a third of a cheap request's CPU there (measured: /jwks 31-35 µs -> 22-24 µs without).
 */
import type { Logger } from "#lib/log";
import type { ServeEnv } from "#lib/runtime";
import { withEditedHeaders } from "./headers.ts";

export const REQUEST_ID_HEADER = "X-Request-Id";
const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

/** The id for a request that came with `incoming` as its `X-Request-Id` (or none). */
export function chooseRequestId(incoming: string | null | undefined): string {
  return incoming && WELL_FORMED.test(incoming) ? incoming : crypto.randomUUID();
}

/** The request's id: the one its entry chose (`env.requestId`), else chosen now by the same rule. */
export function requestIdOf(request: Request, env: ServeEnv | undefined): string {
  return env?.requestId ?? chooseRequestId(request.headers.get(REQUEST_ID_HEADER));
}

export interface RequestIdOptions {
  /** Receives one `info` line per request: request id, method, path (no query), status, duration. */
  accessLog?: Logger;
}

/** What `withRequestId` needs of an app: Hono's `fetch` (request, env, execution context). */
export interface FetchingApp {
  // `any`: Hono types env by each app's bindings; ServeEnv is the part this module reads and adds.
  // deno-lint-ignore no-explicit-any
  fetch: (request: Request, env?: any, executionCtx?: any) => Response | Promise<Response>;
}

/** Replaces `app.fetch` with one that marks and logs every request (see the module comment). */
export function withRequestId<A extends FetchingApp>(app: A, options: RequestIdOptions = {}): A {
  const inner = app.fetch;
  const log = options.accessLog;
  app.fetch = (request, env, executionCtx) => {
    const started = log?.enabled("info") ? performance.now() : undefined;
    const preset = (env as ServeEnv | undefined)?.requestId;
    const id = requestIdOf(request, env as ServeEnv | undefined);
    const finish = (res: Response): Response => {
      if (preset === undefined && !res.headers.has(REQUEST_ID_HEADER)) res = withEditedHeaders(res, (h) => h.set(REQUEST_ID_HEADER, id));
      if (started !== undefined) {
        log!.info("request", {
          request_id: id,
          method: request.method,
          path: new URL(request.url).pathname,
          status: res.status,
          duration_ms: Math.round((performance.now() - started) * 100) / 100,
        });
      }
      return res;
    };
    const res = inner(request, preset === undefined ? { ...env, requestId: id } : env, executionCtx);
    return res instanceof Promise ? res.then(finish) : finish(res);
  };
  return app;
}
