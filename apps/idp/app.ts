/**
 * The identity provider as one Hono app.
 *
 * `createApp(options)` is synchronous. Signing keys are loaded (configured ones imported, missing
 * ones generated) asynchronously in the background as soon as the app is built; /healthz never
 * waits for them, and the first request that needs a key awaits the same promise. `createIdp`
 * does the same but resolves once the keys are ready (handy for in-process tests and benchmarks).
 *
 * Every endpoint is served at the root and, with a path-based issuer, under the issuer's path.
 */
import { type Context, type ExecutionContext, Hono } from "hono";
import { apiNotFound, BodyLimitError, withRequestId } from "#lib/http";
import { createLogger, errorFields, type Logger } from "#lib/log";
import { notifyExpiredSessions } from "./domain/backchannel.ts";
import type { ClientConfig } from "./domain/clients.ts";
import { OAuthError, PageError } from "./domain/errors.ts";
import type { TrustedIssuer } from "./domain/trusted-issuers.ts";
import { type AccessTokenFormat, PATH_ISSUER_NAME, Provider } from "./domain/provider.ts";
import type { RandomBytes } from "./domain/random.ts";
import type { RegistrationPolicy } from "./domain/registration.ts";
import { RequestLog } from "./domain/request-log.ts";
import { parseClaimMappings } from "./domain/claim-mappings.ts";
import { registerRequestRecording } from "./routes/debug-requests.ts";
import { messagePage } from "./pages/layout.ts";
import { registerAuthorize } from "./routes/authorize.ts";
import { registerDebug } from "./routes/debug.ts";
import { notFromThisSite, sameOriginOnly } from "./routes/same-origin.ts";
import { registerDevice } from "./routes/device.ts";
import { registerDiscovery } from "./routes/discovery.ts";
import { registerEndSession } from "./routes/end-session.ts";
import { CORS_ENDPOINTS, registerCors } from "./routes/cors.ts";
import { oauthErrorResponse, PAGE_HEADERS } from "./routes/http.ts";
import { registerIntrospection } from "./routes/introspection.ts";
import { registerPar } from "./routes/par.ts";
import { registerRegistration } from "./routes/register.ts";
import { registerToken } from "./routes/token.ts";
import { registerUserinfo } from "./routes/userinfo.ts";
import { MemoryStateStore } from "./state/memory.ts";
import type { IdpStateStore } from "./state/store.ts";

export type { ClientConfig } from "./domain/clients.ts";
export type { IdpStateStore } from "./state/store.ts";

export interface IdpAppOptions {
  /** Issuer URL, may have a path. `{origin}` is replaced by each request's origin. */
  issuer: string;
  /** Default "dev-client"; equal to a builtin it merges into it, otherwise a new permissive client. */
  clientId?: string;
  /** "" or undefined: public. */
  clientSecret?: string;
  /** Default http://localhost:3000/callback and http://127.0.0.1:3000/callback. */
  redirectUris?: string[];
  /** More post-logout redirect URIs of the configured client (env IDP_POST_LOGOUT_REDIRECT_URIS). */
  postLogoutRedirectUris?: string[];
  /** Origins that may read answers from a page, beyond the redirect URIs' (`*`: any; env IDP_CORS_ORIGINS). */
  corsOrigins?: string[];
  /** A parsed users document: `{users:[...]}` or `[...]` (validated by parseSeededUsers). */
  users?: unknown;
  clients?: ClientConfig[];
  /** Trusted issuers of the JWT bearer grant (env IDP_JWT_BEARER_ISSUERS, --jwt-bearer-issuers). */
  jwtBearerIssuers?: TrustedIssuer[];
  /** Optional private JWK set `{keys:[...]}` for kids of /jwks (domain/keys.ts KIDS); the others are generated. */
  signingKeys?: unknown;
  /** Default: in memory. A shared SQL store (state/sql.ts) lets several instances act as one. */
  state?: IdpStateStore;
  /** Clock in ms. Default Date.now. */
  now?: () => number;
  /** Default setTimeout-based; the token-slow scenario and the slow key mode wait with it. */
  sleep?: (ms: number) => Promise<void>;
  /** Delay of the `token-slow` scenario (default 10000; env IDP_TOKEN_SLOW_MS). */
  tokenSlowMs?: number;
  /** Delay of the `slow` key endpoint mode (default 10000; env IDP_JWKS_SLOW_MS). */
  jwksSlowMs?: number;
  /** "opaque" (default) or "jwt": RFC 9068 access tokens signed like ID tokens. */
  accessTokenFormat?: AccessTokenFormat;
  /** `aud` of JWT access tokens (default: the client id). */
  accessTokenAudience?: string;
  random?: RandomBytes;
  logger?: Logger;
  /** One log line per request (default true; off under `wrangler dev`, which logs each request). */
  accessLog?: boolean;
  /**
   * Issuers by path (default true): `/{name}/...` is an issuer of its own, `<issuer>/{name}`, for
   * any first path segment that is not one of the provider's (env IDP_ISSUERS_BY_PATH=off).
   */
  issuersByPath?: boolean;
  /** The debug interface's access token (Bearer or the cookie its link sets; env IDP_DEBUG_TOKEN). */
  debugToken?: string;
  /** Claims per client, scope or subject: a parsed mappings document (claim-mappings.ts; env IDP_CLAIM_MAPPINGS). */
  claimMappings?: unknown;
  /** Back-channel logout URIs by client id (env IDP_BACKCHANNEL_LOGOUT_URIS, a JSON object). */
  backchannelLogoutUris?: Record<string, string>;
  /** Timeout of one back-channel logout POST in ms (default 5000; env IDP_BACKCHANNEL_TIMEOUT_MS). */
  backchannelTimeoutMs?: number;
  /** Await back-channel logout POSTs within the request (edge.ts on Workers); default: after the response. */
  awaitDeliveries?: boolean;
  /** Dynamic client registration: open, token or off (env IDP_REGISTRATION); default open on a loopback issuer, else off. */
  registration?: RegistrationPolicy;
  /** The initial access token for registration (env IDP_REGISTRATION_TOKEN). */
  registrationToken?: string;
  /** Every authorization request must be pushed to /par first (env IDP_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS). */
  requirePushedAuthorizationRequests?: boolean;
  /** Redirect URIs or patterns of a preview deployment, added to the configured client's (env IDP_PREVIEW_REDIRECT_URIS). */
  previewRedirectUris?: string[];
  /** Node and Deno: `setImmediate`, so the requests of one turn share one read of a shared store's settings (ProviderOptions). */
  afterThisTurn?: (run: () => void) => void;
}

const SLOW_MS = 10_000;
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function errorHandler(logger: Logger) {
  return (err: Error, c: Context): Response | Promise<Response> => {
    if (err instanceof OAuthError) {
      if (err.status >= 500) logger.warn("oauth server_error", { error: err.description });
      return oauthErrorResponse(c, err);
    }
    if (err instanceof PageError) return c.html(messagePage(err.title, err.message, "error"), err.status, PAGE_HEADERS);
    // A body over the limit is not read on: the connection closes after the answer. A browser's
    // form post (login, consent, logout, device approval) gets a page; a program gets OAuth JSON.
    if (err instanceof BodyLimitError) {
      const status = err.code === "BODY_TOO_LARGE" ? 413 : 400;
      const headers = { "Cache-Control": "no-store", ...(status === 413 ? { Connection: "close" } : {}) };
      if (isBrowserEndpoint(c.req.path)) return c.html(messagePage("Request too large", err.message, "error"), status, { ...PAGE_HEADERS, ...headers });
      return c.json({ error: "invalid_request", error_description: err.message }, status, headers);
    }
    logger.error("unhandled error", { ...errorFields(err), path: new URL(c.req.url).pathname });
    return c.json({ error: "server_error", error_description: "internal error" }, 500, { "Cache-Control": "no-store" });
  };
}

/** The provider's routes, mountable at several prefixes; `debug: false` for an issuer by path: the debug interface changes the
 * whole provider, so it is served at the provider's own paths only, never under an alias a mount's
 * exclusion would not name. */
function routes(p: Provider, options: { debug?: boolean } = {}): Hono {
  const app = new Hono();
  app.get("/healthz", (c) => c.text("ok"));
  // Outermost, so the request log sees every answer (a refused cross-site post included).
  registerRequestRecording(app, p);
  // Device approval is a form of this provider's own page: one another site sent is refused (it
  // would hand the attacker's device the user's tokens). The login form: in authorize.ts.
  app.use("/device", sameOriginOnly(() => notFromThisSite()));
  registerCors(app, p); // before the routes it wraps
  registerDiscovery(app, p);
  registerAuthorize(app, p);
  registerToken(app, p);
  registerDevice(app, p);
  registerUserinfo(app, p);
  registerEndSession(app, p);
  registerIntrospection(app, p);
  registerPar(app, p);
  registerRegistration(app, p);
  if (options.debug !== false) registerDebug(app, p);
  return app;
}

export function createProvider(options: IdpAppOptions): Provider {
  const provider = new Provider({
    issuer: options.issuer,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    redirectUris: options.redirectUris,
    postLogoutRedirectUris: options.postLogoutRedirectUris,
    corsOrigins: options.corsOrigins,
    users: options.users,
    clients: options.clients,
    jwtBearerIssuers: options.jwtBearerIssuers,
    signingKeys: options.signingKeys,
    state: options.state ?? new MemoryStateStore(),
    now: options.now ?? Date.now,
    random: options.random,
    sleep: options.sleep ?? defaultSleep,
    tokenSlowMs: options.tokenSlowMs ?? SLOW_MS,
    jwksSlowMs: options.jwksSlowMs ?? SLOW_MS,
    accessTokenFormat: options.accessTokenFormat,
    accessTokenAudience: options.accessTokenAudience,
    backchannelLogoutUris: options.backchannelLogoutUris,
    backchannelTimeoutMs: options.backchannelTimeoutMs,
    awaitDeliveries: options.awaitDeliveries,
    debugToken: options.debugToken,
    registration: options.registration,
    registrationToken: options.registrationToken,
    requirePushedAuthorizationRequests: options.requirePushedAuthorizationRequests,
    previewRedirectUris: options.previewRedirectUris,
    afterThisTurn: options.afterThisTurn,
    requestLog: new RequestLog(),
    claimMappings: parseClaimMappings(options.claimMappings),
    logger: options.logger ?? createLogger({ fields: { service: "idp" } }),
  });
  // Sessions that expired by the provider clock end for their clients at the amortised pruning.
  provider.beforePruning(notifyExpiredSessions);
  return provider;
}

/** The endpoints a browser navigates to or posts a form at: their errors are pages. */
const BROWSER_ENDPOINTS = ["/authorize", "/end-session", "/device"];
const isBrowserEndpoint = (path: string) => BROWSER_ENDPOINTS.some((e) => path.endsWith(e));

/** The methods each endpoint serves: a known path asked with another method gets 405, not 404
 * (with OPTIONS where a CORS preflight is answered, `CORS_ENDPOINTS`). */
const ALLOWED_METHODS: Record<string, string> = {
  "/token": "POST",
  "/device_authorization": "POST",
  "/introspect": "POST",
  "/revoke": "POST",
  "/par": "POST",
  "/register": "POST",
  "/authorize": "GET, POST",
  "/device": "GET, POST",
  "/userinfo": "GET, POST",
  "/end-session": "GET, POST",
  "/jwks": "GET",
  "/.well-known/openid-configuration": "GET",
  "/healthz": "GET",
};

/**
 * 405 for a known endpoint asked with a method it does not serve, else the JSON 404. Decided here,
 * after routing failed, rather than by catch-all routes: a catch-all would also match every
 * served request, and a request that matches one handler alone is dispatched synchronously.
 */
function notFoundOr405(prefixes: string[]) {
  return (c: Context): Response => {
    const path = c.req.path;
    const prefix = prefixes.find((pre) => pre !== "" && path.startsWith(pre + "/"));
    const local = prefix ? path.slice(prefix.length) : path;
    const served = Object.hasOwn(ALLOWED_METHODS, local) ? ALLOWED_METHODS[local] : undefined;
    if (served === undefined) return apiNotFound(c);
    const allow = Object.hasOwn(CORS_ENDPOINTS, local) ? `${served}, OPTIONS` : served;
    return c.json({ error: "invalid_request", error_description: `${c.req.method} is not allowed; use ${allow}` }, 405, { Allow: allow });
  };
}

/** First path segments of the provider's own routes: never the name of an issuer by path. */
const OWN_SEGMENTS = new Set([
  "healthz",
  ".well-known",
  "authorize",
  "token",
  "device_authorization",
  "device",
  "userinfo",
  "end-session",
  "jwks",
  "introspect",
  "revoke",
  "par",
  "register",
  "debug",
]);
const MAX_PATH_ISSUER_APPS = 256;

/** The issuer by path a request that no route of the configured issuer matched is for, if any. */
function pathIssuerName(p: Provider, path: string): string | undefined {
  const local = p.issuerPath && path.startsWith(p.issuerPath + "/") ? path.slice(p.issuerPath.length) : path;
  const end = local.indexOf("/", 1);
  if (end < 0) return undefined;
  const name = local.slice(1, end);
  if (!PATH_ISSUER_NAME.test(name) || OWN_SEGMENTS.has(name)) return undefined;
  // `/realms/other/...` with the issuer at /realms/dev: the configured issuer's path, not a name.
  if (p.issuerPath && local === path && p.issuerPath.split("/")[1] === name) return undefined;
  return name;
}

/** The app of one issuer by path: every route under `/{name}` (and under the configured issuer's path). */
function pathIssuerApp(root: Provider, name: string, logger: Logger): Hono {
  const p = root.pathIssuer(name);
  const prefixes = [...new Set([`/${name}`, p.issuerPath])];
  const app = new Hono();
  app.onError(errorHandler(logger));
  app.notFound(notFoundOr405(prefixes));
  const r = routes(p, { debug: false });
  for (const prefix of prefixes) app.route(prefix, r);
  return app;
}

/**
 * Issuers by path: a request no route matched whose first path segment is not one of the
 * provider's own goes to the issuer named by that segment (built on first use).
 */
function pathIssuers(root: Provider, logger: Logger, fallback: (c: Context) => Response) {
  const apps = new Map<string, Hono>();
  return (c: Context): Response | Promise<Response> => {
    const name = pathIssuerName(root, c.req.path);
    if (name === undefined) return fallback(c);
    let app = apps.get(name);
    if (!app) {
      if (apps.size >= MAX_PATH_ISSUER_APPS) apps.delete(apps.keys().next().value!);
      apps.set(name, app = pathIssuerApp(root, name, logger));
    }
    let executionCtx: ExecutionContext | undefined;
    try {
      executionCtx = c.executionCtx;
    } catch {
      executionCtx = undefined; // not on workerd
    }
    return app.fetch(c.req.raw, c.env, executionCtx);
  };
}

function buildApp(p: Provider, logger: Logger, accessLog = true, issuersByPath = true): Hono {
  const app = new Hono();
  app.onError(errorHandler(logger));
  const notFound = notFoundOr405([p.issuerPath]);
  app.notFound(issuersByPath ? pathIssuers(p, logger, notFound) : notFound);
  // Settings another instance may have changed are read before each request. (A store of this
  // instance's own is read once, before serving: no middleware, so a request that matches one
  // handler alone is still dispatched synchronously.)
  if (p.state.shared) {
    app.use(async (c, next) => {
      // /healthz is liveness: it answers without the database.
      if (!c.req.path.endsWith("/healthz")) await p.sync();
      await next();
    });
  }
  const r = routes(p);
  if (p.issuerPath) app.route(p.issuerPath, r);
  app.route("/", r);
  return withRequestId(app, { accessLog: accessLog ? logger : undefined });
}

/**
 * Builds the app; keys load in the background (see the module comment). A store given in the
 * options that is not shared must answer at once (the memory store does); for one that answers
 * later (a Durable Object's storage), `loadApp`.
 */
export function createApp(options: IdpAppOptions): Hono {
  const p = createProvider(options);
  p.warmUp();
  return buildApp(p, p.logger, options.accessLog, options.issuersByPath);
}

/** Builds the app once the stored settings (clock, key endpoint mode, scenarios) are read; keys load in the background. */
export async function loadApp(options: IdpAppOptions): Promise<Hono> {
  const p = createProvider(options);
  await p.sync();
  p.warmUp();
  return buildApp(p, p.logger, options.accessLog, options.issuersByPath);
}

/** Builds the app and waits until the signing keys are ready. */
export async function createIdp(options: IdpAppOptions): Promise<{ app: Hono; provider: Provider }> {
  const provider = createProvider(options);
  await provider.sync();
  await provider.keys();
  return { app: buildApp(provider, provider.logger, options.accessLog, options.issuersByPath), provider };
}
