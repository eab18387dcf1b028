/**
 * Recording the requests the provider's endpoints receive, and `GET`/`DELETE /debug/requests`
 * (domain/request-log.ts). Recording copies a few fields after the answer is made; parsing and
 * masking happen when the list is read, so the code flow pays next to nothing.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { OAuthError } from "../domain/errors.ts";
import type { Provider } from "../domain/provider.ts";
import type { RawRequest, RequestFilter } from "../domain/request-log.ts";
import { bodyTextRead } from "./http.ts";

/** The endpoints whose requests are recorded (relying parties' calls; not discovery, keys, health or debug). */
const RECORDED_ENDPOINTS = [
  "/authorize",
  "/token",
  "/userinfo",
  "/end-session",
  "/introspect",
  "/revoke",
  "/device_authorization",
  "/device",
  "/par",
  "/register",
] as const;

/** Most characters of a query, body or header kept per request: the ring stays small (500 × 5 × 8 KiB at most) whatever was sent. */
const MAX_RECORDED_CHARS = 8192;
/**
 * A string of its own: a slice of a longer string keeps the whole of it alive (V8's sliced
 * strings), so 500 slices of 1 MiB bodies would hold 500 MiB. The texts recorded are well-formed
 * (decoded bodies, URLs, header values), so the round trip keeps them as they were.
 */
const ownCopy = (text: string) => new TextDecoder().decode(new TextEncoder().encode(text));
const capped = (text: string) => (text.length > MAX_RECORDED_CHARS ? ownCopy(text.slice(0, MAX_RECORDED_CHARS)) : text);

/** Clients only a handler knows (a token's at /userinfo), by request. */
const clientsNoted = new WeakMap<Request, string>();

/** Names the client of a request whose parameters do not (userinfo: the access token's client). */
export function noteClient(c: Context, clientId: string): void {
  clientsNoted.set(c.req.raw, clientId);
}

/** Records each request to `endpoint` after its answer (preflights are not requests of the protocol). */
function recordRequests(p: Provider, endpoint: string): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const log = p.options.requestLog;
    if (!log || c.req.method === "OPTIONS") return;
    const request = c.req.raw;
    const url = request.url;
    const queryAt = url.indexOf("?");
    const raw: RawRequest = {
      at: p.now(),
      method: request.method,
      issuer: p.issuerFor(url),
      endpoint,
      query: queryAt < 0 ? "" : ownCopy(url.slice(queryAt + 1, queryAt + 1 + MAX_RECORDED_CHARS)),
      dpop: request.headers.has("dpop"),
      status: c.res.status,
    };
    const body = bodyTextRead(request);
    if (body !== undefined) raw.body = capped(body);
    const authorization = request.headers.get("authorization");
    if (authorization !== null) raw.authorization = capped(authorization);
    if (c.error instanceof OAuthError) raw.error = c.error.error;
    const location = c.res.headers.get("location");
    if (location !== null) raw.location = capped(location);
    const challenge = c.res.headers.get("www-authenticate");
    if (challenge !== null) raw.wwwAuthenticate = capped(challenge);
    const client = clientsNoted.get(request);
    if (client !== undefined) raw.client_id = client;
    log.record(raw);
  };
}

/** Records the requests to every endpoint of RECORDED_ENDPOINTS (the client management URIs `/register/<id>` as `/register`). */
export function registerRequestRecording(app: Hono, p: Provider): void {
  for (const endpoint of RECORDED_ENDPOINTS) app.use(endpoint, recordRequests(p, endpoint));
  // Not "/register/*": Hono matches that at "/register" too, which would record a registration twice.
  app.use("/register/:client_id", recordRequests(p, "/register"));
}

/** `GET /debug/requests` (`?client_id=`, `?endpoint=`) and `DELETE /debug/requests`. */
export function registerDebugRequests(app: Hono, p: Provider): void {
  app.get("/debug/requests", (c) => {
    const filter: RequestFilter = {};
    const clientId = c.req.query("client_id");
    if (clientId) filter.client_id = clientId;
    const endpoint = c.req.query("endpoint");
    if (endpoint) filter.endpoint = endpoint;
    return c.json(p.options.requestLog?.list(filter) ?? []);
  });
  app.delete("/debug/requests", (c) => c.json({ cleared: p.options.requestLog?.clear() ?? 0 }));
}
