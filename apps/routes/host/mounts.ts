/**
 * Mounts and static directories, matched before any route in registration order, on the path
 * Hono would route (`routingPath`), so an encoded path cannot step around an exclusion. Hono's own
 * `app.mount` has no exclusions and no body bound, so the host keeps this one loop.
 */
import type { MiddlewareHandler } from "hono";
import { serveStatic, type StaticDirectory } from "#lib/http";
import type { FetchHandler, ServeEnv } from "#lib/runtime";
import { rawBelow, routingPath, underPrefix } from "../core/plan.ts";
import { errorResponse } from "../core/reply.ts";
import { boundedBody, RequestBodyError } from "../core/request.ts";
import type { HostEnv } from "../pipeline/state.ts";

export type MountEntry =
  | { kind: "mount"; prefix: string; handler: FetchHandler; stripPrefix: boolean; excludePrefixes: string[]; at: string }
  | {
    kind: "static";
    prefix: string;
    dir: StaticDirectory;
    excludePrefixes: string[];
    at: string;
    /** A single-page app's index, answering GET and HEAD paths that name no file. */
    spaIndex?: string;
  };

export function mountsMiddleware(mounts: MountEntry[], maxBodyBytes: number): MiddlewareHandler<{ Bindings: HostEnv }> {
  return async (c, next) => {
    const request = c.req.raw;
    const url = new URL(request.url);
    // A runtime may hand over the target as the client wrote it (Deno keeps `/x/../y`): the URL
    // parser's form is the one matched and the one a mounted app gets.
    const routed = routingPath(url.href);
    for (const m of mounts) {
      if (!underPrefix(routed, m.prefix) || m.excludePrefixes.some((p) => underPrefix(routed, p))) continue;
      const rest = rawBelow(url.pathname, m.prefix);
      if (m.kind === "static") return serveStatic(m.dir, request, rest, m.spaIndex);
      return forwardToMount(m, request, url, rest, maxBodyBytes, { ...c.env, mountPrefix: m.prefix, mountStripped: m.stripPrefix });
    }
    await next();
  };
}

/**
 * A mounted app gets the request with the path it is matched on (stripped or not), and a body
 * bounded by the host's limit like every other route's: past it the host answers 413, whatever
 * the app made of its cut-off body.
 */
async function forwardToMount(
  m: Extract<MountEntry, { kind: "mount" }>,
  request: Request,
  url: URL,
  rest: string,
  maxBodyBytes: number,
  env: ServeEnv,
): Promise<Response> {
  const target = new URL(url);
  if (m.stripPrefix) target.pathname = rest === "" ? "/" : rest;
  // The method first: on @hono/node-server, touching `body` builds a full Request (costly).
  const reads = request.method !== "GET" && request.method !== "HEAD";
  let bounded: ReturnType<typeof boundedBody> | undefined;
  try {
    bounded = reads ? boundedBody(request, maxBodyBytes) : undefined;
  } catch (err) {
    if (err instanceof RequestBodyError) return errorResponse(err.status, err.code, err.message, { connection: "close" });
    throw err;
  }
  const same = target.href === request.url && (!bounded || bounded.body === request.body);
  const forwarded = same ? request : new Request(
    target,
    {
      method: request.method,
      headers: request.headers,
      body: bounded?.body ?? null,
      redirect: request.redirect,
      signal: request.signal,
      duplex: "half",
    } as RequestInit,
  );
  let response: Response | undefined;
  try {
    response = await m.handler(forwarded, env);
  } catch (err) {
    if (!bounded?.exceeded()) throw err;
  }
  if (bounded?.exceeded()) {
    await response?.body?.cancel().catch(() => {});
    return errorResponse(413, "BODY_TOO_LARGE", `the request body is larger than ${maxBodyBytes} bytes`, { connection: "close" });
  }
  return response!;
}
