/**
 * The route host: `createRouteHost(options)` gives a `fetch(Request) => Response` handler that
 * serves the routes, mounts and static directories a script registered (through `httpmod` in a
 * sandbox), and planned routes the host registers itself.
 *
 * Per request (decisions.md): mounts and static mounts first, in registration order; then routes,
 * the first registered match winning (host routes before script routes); HEAD falls back to GET.
 * A planned route runs the pipeline on the host side:
 *
 *   parse body (400) -> authenticate (401) -> CSRF on unsafe methods (403) -> resources (404)
 *   -> authorize (403) -> handler
 *
 * and only the handler crosses into a sandbox. A service the route needs that is not configured
 * gives 500: the host fails closed. Audit events go to the sink for routes that declare `.audit`.
 */
import { TrieRouter } from "hono/router/trie-router";
import { errorEnvelope } from "../../lib/http/errors.ts";
import { chooseRequestId, REQUEST_ID_HEADER } from "../../lib/http/request-id.ts";
import type { FileTree } from "../../lib/files/tree.ts";
import type { Logger } from "../../lib/log.ts";
import type { FetchHandler, ServeEnv } from "../../lib/runtime.ts";
import type { HostValue } from "../../lib/sandbox/index.ts";
import { compileRoutePlan, rawBelow, routingPath, underPrefix, type RoutePattern, type RoutePlan, type RoutePlanInput } from "./plan.ts";
import { boundedBody, cookieMap, readBody, RequestBodyError, scriptRequest, type ScriptRequest } from "./request.ts";
import { ResponseRuleError, toWebResponse, type Renderer } from "./response.ts";
import { hostError, noStore, pageFor } from "./error-page.ts";
import type { ScriptRuntime } from "./script/runtime.ts";
import { staticDirectory, type DispatchOutcome, type Registration, type ScriptBundle, type ScriptHostCalls, type ScriptNatives } from "./script/script-sandbox.ts";
import {
  AuthenticationError,
  ResourceNotFoundError,
  type Actor,
  type AuditEvent,
  type AuditOutcome,
  type AuthServices,
  type PipelineRequest,
  type ResourceRef,
} from "./services.ts";
import { DEFAULT_SESSION_COOKIE, randomHex, sessionCookies } from "./session.ts";
import { serveStatic, type StaticDirectory } from "../../lib/http/static-files.ts";

export interface RouteHostOptions {
  /** Development mode: handler error messages in 500 bodies, the dev error page. */
  dev?: boolean;
  /** A matched route without a plan is refused (production hosts that serve planned routes only). */
  rejectRawRoutes?: boolean;
  auth?: AuthServices;
  renderer?: Renderer;
  /** Where script handlers run; made with the natives (tokens, service names) the host installs
   * and the function that runs a handler's service calls. */
  runtime?: (natives: ScriptNatives, hostCalls: ScriptHostCalls) => ScriptRuntime;
  /** Files for `app.static(prefix, directory)`: directories are relative to `staticRoot`. */
  files?: { tree: FileTree; root: string };
  /** Native modules whose functions hand a script a mountable: `require(module)[fn]()`. */
  mountables?: Record<string, Record<string, FetchHandler>>;
  /** Modules of host functions a handler may call, `require(module)[fn](...args)`, each returning
   * a promise in the sandbox (arguments and results are copied as data). */
  services?: Record<string, Record<string, HostServiceFunction>>;
  /** Read-only file trees a script can serve with `app.staticFromAssetsModule`: `require(name)`. */
  assets?: Record<string, StaticDirectory>;
  /** The host session cookie (an identifier, not a credential). */
  session?: { secret: string; cookieName?: string; secure?: boolean };
  logger?: Logger;
  /** Largest request body read, bytes (default 1 MiB). */
  maxBodyBytes?: number;
  now?: () => Date;
}

/** The planned context a host-side handler gets (the script's `ctx`, plus the raw request). */
export interface HostPlannedContext {
  request: ScriptRequest;
  raw: Request;
  actor: Actor | null;
  body: HostValue;
  params: Record<string, string>;
  resources: Record<string, ResourceRef | null>;
  resource(name: string): ResourceRef | null;
  action?: string;
  routeName: string;
  csrfToken?: string;
}

/** A host function a script's handler may call; throw an Error (with a string `code`) to fail it. */
export type HostServiceFunction = (...args: HostValue[]) => HostValue | Promise<HostValue>;

export type HostHandler = (ctx: HostPlannedContext) => Response | Promise<Response>;
export type RawHandler = (request: Request, params: Record<string, string>) => Response | Promise<Response>;

/** One row of the plan table (`routes()`, `npm run routes -- routes`). */
export interface RouteInfo {
  kind: "route" | "mount" | "static";
  method?: string;
  pattern: string;
  name?: string;
  /** "public", "auth" (required), "auth?" (optional actor), or "raw" (no plan). */
  access: "public" | "auth" | "auth?" | "raw" | "mount" | "static";
  resources?: string[];
  csrf?: boolean;
  action?: string;
  audit?: string;
  source: "script" | "host";
  at?: string;
}

export interface RouteHost {
  /** Loads (or reloads) a script: its registrations replace the previous script's at once; on
   * failure (ScriptLoadError, RoutePlanError) the previous script stays and the error is kept. */
  loadScript(bundle: ScriptBundle): Promise<void>;
  /** The last load's error, or undefined after a successful load. */
  readonly loadError: string | undefined;
  /** Resolves when every handler thread has the current script (see ScriptRuntime.ready). */
  ready(): Promise<void>;
  registerPlanned(plan: RoutePlanInput, handler: HostHandler): void;
  registerRaw(method: string, pattern: string, handler: RawHandler): void;
  routes(): RouteInfo[];
  fetch(request: Request, env?: ServeEnv): Promise<Response>;
  close(): Promise<void>;
}

type Target =
  | { kind: "script"; handler: number; at: string }
  | { kind: "host"; handler: HostHandler }
  | { kind: "raw"; handler: RawHandler }
  /** A planned route whose target is a host mountable (`.mount(...)` on the Ready stage). */
  | { kind: "mount"; handler: FetchHandler; prefix: string; strip: boolean; at: string };

interface RouteEntry {
  plan?: RoutePlan;
  method: string;
  pattern: RoutePattern;
  rawPattern: string;
  target: Target;
}

type MountEntry =
  | { kind: "mount"; prefix: string; handler: FetchHandler; stripPrefix: boolean; excludePrefixes: string[]; at: string }
  | { kind: "static"; prefix: string; dir: StaticDirectory; excludePrefixes: string[]; at: string };

interface Table {
  mounts: MountEntry[];
  routes: RouteEntry[];
  router: TrieRouter<number>;
}

const UNSAFE = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS" && method !== "TRACE";

/** Whether a response already sets the cookie `name` (Set-Cookie lines read as one, joined by ", "). */
function setsCookie(response: Response, name: string): boolean {
  const all = response.headers.get("set-cookie");
  return all !== null && (all.startsWith(`${name}=`) || all.includes(`, ${name}=`));
}

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** An HTTP error on the pipeline path: status, stable code, message; audit reason optional. */
class HostReply extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 413 | 500,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function createRouteHost(options: RouteHostOptions = {}): RouteHost {
  const dev = options.dev ?? false;
  const auth = options.auth ?? {};
  const now = options.now ?? (() => new Date());
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const sessions = sessionCookies({
    secret: options.session?.secret ?? randomHex(32),
    cookieName: options.session?.cookieName ?? DEFAULT_SESSION_COOKIE,
    secure: options.session?.secure ?? false,
  });
  const log = options.logger;

  // Tokens a script's natives hand out; only the host knows what they stand for.
  const mountTokens = new Map<string, FetchHandler>();
  const services = options.services ?? {};
  const natives: ScriptNatives = {
    mountables: {},
    assets: {},
    staticFiles: options.files !== undefined,
    services: Object.fromEntries(Object.entries(services).map(([module, fns]) => [module, Object.keys(fns)])),
  };
  const hostCalls: ScriptHostCalls = async (module, fn, args) => {
    const f = Object.hasOwn(services, module) && Object.hasOwn(services[module]!, fn) ? services[module]![fn]! : undefined;
    if (!f) throw new Error(`${module}.${fn} is not a host service`);
    return f(...args);
  };
  for (const [module, fns] of Object.entries(options.mountables ?? {})) {
    natives.mountables[module] = {};
    for (const [fn, handler] of Object.entries(fns)) {
      const token = randomHex(16);
      mountTokens.set(token, handler);
      natives.mountables[module]![fn] = token;
    }
  }
  const assetTokens = new Map<string, StaticDirectory>();
  for (const [name, dir] of Object.entries(options.assets ?? {})) {
    const token = randomHex(16);
    assetTokens.set(token, dir);
    natives.assets[name] = token;
  }
  const runtime = options.runtime?.(natives, hostCalls);

  const hostRoutes: RouteEntry[] = [];
  let script: { mounts: MountEntry[]; routes: RouteEntry[] } = { mounts: [], routes: [] };
  let table: Table = buildTable();
  let loadError: string | undefined;

  function buildTable(): Table {
    const routes = [...hostRoutes, ...script.routes];
    const router = new TrieRouter<number>();
    routes.forEach((r, i) => router.add(r.method === "ALL" ? "ALL" : r.method, r.pattern.path, i));
    return { mounts: script.mounts, routes, router };
  }

  /** `dir`'s subdirectory `rel` (already checked by staticDirectory in the sandbox: re-checked). */
  function below(dir: { tree: FileTree; root: string }, rel: string): StaticDirectory {
    const clean = staticDirectory(rel, "static directory");
    return { tree: dir.tree, root: clean === "" ? dir.root : `${dir.root.replace(/\/+$/, "")}/${clean}` };
  }

  function compileRegistrations(registrations: Registration[]): { mounts: MountEntry[]; routes: RouteEntry[] } {
    const mounts: MountEntry[] = [];
    const routes: RouteEntry[] = [];
    for (const r of registrations) {
      switch (r.kind) {
        case "route": {
          const plan = compileRoutePlan(r.plan);
          routes.push({ plan, method: plan.method, pattern: plan.parsed, rawPattern: plan.pattern, target: { kind: "script", handler: r.handler, at: r.at } });
          break;
        }
        case "guardedMount": {
          const plan = compileRoutePlan(r.plan);
          const handler = mountTokens.get(r.mountable);
          if (!handler) throw new Error(`${r.at}: unknown mountable`);
          // The literal part before "/*": the mount's prefix (what stripPrefix removes).
          const prefix = plan.parsed.path.endsWith("/*") ? plan.parsed.path.slice(0, -2) || "/" : plan.parsed.path;
          routes.push({ plan, method: plan.method, pattern: plan.parsed, rawPattern: plan.pattern, target: { kind: "mount", handler, prefix, strip: r.stripPrefix, at: r.at } });
          break;
        }
        case "mount": {
          const handler = mountTokens.get(r.mountable);
          if (!handler) throw new Error(`${r.at}: unknown mountable`);
          mounts.push({ kind: "mount", prefix: r.prefix, handler, stripPrefix: r.stripPrefix, excludePrefixes: r.excludePrefixes, at: r.at });
          break;
        }
        case "static": {
          if (!options.files) throw new Error(`${r.at}: app.static is not available on this host`);
          mounts.push({ kind: "static", prefix: r.prefix, dir: below(options.files, r.directory), excludePrefixes: [], at: r.at });
          break;
        }
        case "assets": {
          const dir = assetTokens.get(r.assets);
          if (!dir) throw new Error(`${r.at}: unknown assets module`);
          mounts.push({ kind: "static", prefix: r.prefix, dir: below(dir, r.root), excludePrefixes: [], at: r.at });
          break;
        }
      }
    }
    return { mounts, routes };
  }

  // ---- matching ----------------------------------------------------------------------------------

  function match(method: string, path: string): { entry: RouteEntry; params: Record<string, string> } | undefined {
    const lookup = (m: string) => table.router.match(m, path)[0] as [number, Record<string, string>][];
    const candidates = lookup(method);
    if (method === "HEAD") candidates.push(...lookup("GET"));
    let best: [number, Record<string, string>] | undefined;
    for (const c of candidates) if (!best || c[0] < best[0]) best = c;
    if (!best) return undefined;
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(best[1])) params[k] = decodeParam(v);
    return { entry: table.routes[best[0]]!, params };
  }

  function allowedMethods(path: string): string[] {
    const found = new Set<string>();
    for (const m of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) if ((table.router.match(m, path)[0] as unknown[]).length > 0) found.add(m);
    if (found.has("GET")) found.add("HEAD");
    for (const r of table.routes) if (!["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "ALL"].includes(r.method) && (table.router.match(r.method, path)[0] as unknown[]).length > 0) found.add(r.method);
    return [...found];
  }

  // ---- responses ---------------------------------------------------------------------------------

  function errorResponse(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
    return hostError(new Response(JSON.stringify(errorEnvelope(code, message)), { status, headers: { "content-type": "application/json", ...headers } }));
  }

  function internal(message: string, requestId: string, fields: Record<string, unknown> = {}): Response {
    log?.error("route failed", { request_id: requestId, error: message, ...fields });
    return errorResponse(500, "INTERNAL", dev ? message : "internal error");
  }

  // ---- the pipeline ------------------------------------------------------------------------------

  async function planned(request: Request, url: URL, entry: RouteEntry, params: Record<string, string>, requestId: string, ip: string): Promise<Response> {
    const plan = entry.plan!;
    const cookies = cookieMap(request.headers);
    const hostSession = await sessions.read(cookies, request.headers.get("cookie"));
    /** A new session gets its cookie only if something used it (session.ts). */
    let sessionUsed = false;
    let actor: Actor | null = null;
    let resources: Record<string, ResourceRef | null> = {};
    let allowed = false;

    /** Audit writes of this request: each is awaited before the response leaves, so an event is
     * stored when the client sees the outcome (and a Worker does not drop it after responding). */
    const audits: Promise<void>[] = [];
    const audit = (outcome: AuditOutcome, extra: Partial<AuditEvent> = {}) => {
      if (!plan.audit || !auth.audit) return;
      const first = plan.resources[0] ? resources[plan.resources[0].type] : undefined;
      const event: AuditEvent = {
        event: plan.audit,
        outcome,
        routeName: plan.name,
        method: request.method,
        pattern: plan.pattern,
        requestId,
        at: now().toISOString(),
        ...(plan.action !== undefined ? { action: plan.action } : {}),
        ...(actor ? { actor } : {}),
        ...(first ? { resource: first } : {}),
        ...(plan.resources.length > 0 ? { resources } : {}),
        ...extra,
      };
      const sink = auth.audit;
      audits.push(
        (async () => {
          try {
            await sink.record(event);
          } catch (err) {
            log?.error("audit sink failed", { request_id: requestId, error: String(err) });
          }
        })(),
      );
    };
    const recorded = async (r: Response) => {
      if (audits.length > 0) await Promise.all(audits);
      // Signed in: not kept by the browser, so Back after signing out cannot show it (error-page.ts).
      return actor ? noStore(r) : r;
    };
    const deny = (reply: HostReply, reason: string) => {
      audit("denied", { reason, statusCode: reply.status });
      return reply;
    };

    let response: Response;
    try {
      // 1. Body (bad JSON is 400 before anything else looks at the request).
      let body;
      try {
        body = await readBody(request, maxBodyBytes);
      } catch (err) {
        // Past the limit the rest of the body is not read: the connection closes after the 413.
        if (err instanceof RequestBodyError) throw deny(new HostReply(err.status, err.code, err.message, err.status === 413 ? { connection: "close" } : {}), err.code.toLowerCase());
        throw err;
      }
      const parsed = scriptRequest(request, url, { params, session: hostSession, ip, cookies, ...body });
      const pipe: PipelineRequest = { request, script: parsed, route: plan, requestId };

      // Fail closed: every service this route needs must exist before anything is decided.
      const missing: string[] = [];
      if (!plan.public) {
        if (!auth.authenticator) missing.push("authenticator");
        if (!auth.authorizer) missing.push("authorizer");
        if (plan.resources.length > 0 && !auth.resources) missing.push("resource resolver");
      }
      if (plan.csrf && UNSAFE(request.method) && !auth.csrf) missing.push("CSRF protector");
      if (missing.length > 0) throw deny(new HostReply(500, "SERVICE_MISSING", `route ${plan.name} needs host services that are not configured: ${missing.join(", ")}`), "service_missing");

      // 2. Authenticate.
      if (!plan.public) {
        try {
          actor = (await auth.authenticator!.authenticate(pipe)) ?? null;
        } catch (err) {
          if (!(err instanceof AuthenticationError)) throw err;
          const challenge = auth.authenticator!.challenge?.(pipe, err);
          throw deny(new HostReply(401, "UNAUTHENTICATED", err.message, challenge ? { "www-authenticate": challenge } : {}), err.code);
        }
        if (!actor && plan.auth?.required) {
          const signIn = request.method === "GET" && (request.headers.get("accept") ?? "").includes("text/html") ? auth.authenticator!.signInUrl?.(pipe) : undefined;
          if (signIn) {
            audit("denied", { reason: "no_credentials", statusCode: 302 });
            response = new Response(null, { status: 302, headers: { location: signIn, "cache-control": "no-store" } });
            if (hostSession.isNew) response.headers.append("set-cookie", await sessions.issue(hostSession));
            return recorded(response);
          }
          const challenge = auth.authenticator!.challenge?.(pipe);
          throw deny(new HostReply(401, "UNAUTHENTICATED", "this route needs credentials", challenge ? { "www-authenticate": challenge } : {}), "no_credentials");
        }
      }

      // 3. CSRF, on unsafe methods.
      if (plan.csrf && UNSAFE(request.method) && !(await auth.csrf!.verify(pipe))) throw deny(new HostReply(403, "CSRF_FAILED", "the CSRF token is missing or wrong"), "csrf");

      // 4. Resources.
      for (const spec of plan.resources) {
        let ref: ResourceRef | null = null;
        try {
          ref = (await auth.resources!.resolve({ type: spec.type, id: spec.idParam ? params[spec.idParam] : undefined, tenantId: spec.tenantParam ? params[spec.tenantParam] : undefined, actor, route: plan })) ?? null;
        } catch (err) {
          if (!(err instanceof ResourceNotFoundError)) throw err;
        }
        resources = { ...resources, [spec.type]: ref };
        if (!ref && spec.mustExist) throw deny(new HostReply(404, "NOT_FOUND", `${spec.type} not found`), "resource_not_found");
      }

      // 5. Authorize.
      if (!plan.public) {
        const first = plan.resources[0] ? resources[plan.resources[0].type] ?? null : null;
        const decision = await auth.authorizer!.authorize({ actor, action: plan.action!, resource: first, resources, route: plan });
        if (!decision.allow) throw deny(new HostReply(403, "FORBIDDEN", "not allowed"), decision.reason ?? "denied");
      }

      allowed = true;
      audit("allowed");

      // 6. The handler.
      // Authenticated routes (the pages that post forms) get the CSRF token; public ones do not, so
      // they cost no HMAC and set no session cookie.
      let csrfToken: string | undefined;
      if (auth.csrf?.token && !plan.public) {
        csrfToken = await auth.csrf.token(hostSession);
        sessionUsed = true;
      }
      const ran = await runHandler(entry, { request, script: parsed, bytes: body.bytes, actor, resources, plan, csrfToken, requestId });
      response = ran.response;
      sessionUsed ||= ran.sessionUsed;
    } catch (err) {
      if (err instanceof HostReply) {
        if (err.status === 500) log?.error("route refused", { request_id: requestId, route: plan.name, error: err.message });
        const message = err.status === 500 && !dev ? "internal error" : err.message;
        response = errorResponse(err.status, err.status === 500 && !dev ? "INTERNAL" : err.code, message, err.headers);
      } else {
        response = internal(err instanceof Error ? err.message : String(err), requestId, { route: plan.name });
      }
      if (allowed) audit("failed", { statusCode: response.status, reason: "handler_error" });
      return recorded(response);
    }
    if (response.status >= 500) audit("failed", { statusCode: response.status, reason: "handler_error" });
    else audit("completed", { statusCode: response.status });
    // A handler that issued a session cookie of its own (sign-in renews the id) keeps it.
    if (sessionUsed && hostSession.isNew && !setsCookie(response, sessions.cookieName)) response.headers.append("set-cookie", await sessions.issue(hostSession));
    return recorded(response);
  }

  interface HandlerCall {
    request: Request;
    script: ScriptRequest;
    /** The body as received (a mounted target gets it unchanged). */
    bytes?: Uint8Array;
    actor: Actor | null;
    resources: Record<string, ResourceRef | null>;
    plan: RoutePlan;
    csrfToken?: string;
    requestId: string;
  }

  async function runHandler(entry: RouteEntry, call: HandlerCall): Promise<{ response: Response; sessionUsed: boolean }> {
    const { target } = entry;
    if (target.kind === "host") {
      const resources = call.resources;
      let sessionUsed = false;
      const session = call.script.session;
      const request = Object.defineProperty({ ...call.script }, "session", {
        get: () => ((sessionUsed = true), session),
        enumerable: true,
      });
      const response = await target.handler({
        request,
        raw: call.request,
        actor: call.actor,
        body: call.script.body,
        params: call.script.params,
        resources,
        resource: (name) => resources[name] ?? null,
        action: call.plan.action,
        routeName: call.plan.name,
        csrfToken: call.csrfToken,
      });
      return { response, sessionUsed };
    }
    if (target.kind === "mount") {
      // The pipeline has passed: the request goes on as it came (its body was read: re-attached).
      const url = new URL(call.request.url);
      if (target.strip && target.prefix !== "/") url.pathname = rawBelow(url.pathname, target.prefix) || "/";
      const hasBody = call.bytes !== undefined && call.bytes.byteLength > 0;
      const forwarded = new Request(url, { method: call.request.method, headers: call.request.headers, body: hasBody ? (call.bytes as Uint8Array<ArrayBuffer>) : undefined });
      return { response: await target.handler(forwarded, { requestId: call.requestId, clientAddress: call.script.ip || undefined, mountPrefix: target.prefix }), sessionUsed: false };
    }
    if (target.kind !== "script") throw new Error("not a script route");
    if (!runtime) throw new HostReply(500, "NO_RUNTIME", "no script runtime is configured");
    const outcome: DispatchOutcome = await runtime.dispatch(target.handler, {
      request: call.script as unknown as HostValue,
      actor: call.actor as unknown as HostValue,
      resources: call.resources as unknown as HostValue,
      action: call.plan.action,
      routeName: call.plan.name,
      csrfToken: call.csrfToken,
    });
    for (const line of outcome.console) log?.info("script console", { request_id: call.requestId, route: call.plan.name, level: line.level, text: line.text });
    if (!outcome.ok) {
      log?.error("handler failed", { request_id: call.requestId, route: call.plan.name, failure: outcome.failure, error: outcome.message, stack: outcome.stack, at: target.at });
      return { response: errorResponse(500, "HANDLER_FAILED", dev ? outcome.message : "internal error"), sessionUsed: false };
    }
    try {
      return { response: await toWebResponse(outcome.response, call.request.method, options.renderer), sessionUsed: outcome.response.sessionUsed === true };
    } catch (err) {
      if (err instanceof ResponseRuleError) {
        log?.error("handler response refused", { request_id: call.requestId, route: call.plan.name, error: err.message, at: target.at });
        return { response: errorResponse(500, "HANDLER_FAILED", dev ? err.message : "internal error"), sessionUsed: false };
      }
      throw err;
    }
  }

  // ---- fetch ---------------------------------------------------------------------------------------

  /**
   * A mounted app gets the request with the path it is matched on (stripped or not), and a body
   * bounded by the host's limit like every other route's: past it the host answers 413, whatever
   * the app made of its cut-off body.
   */
  async function forwardToMount(m: Extract<MountEntry, { kind: "mount" }>, request: Request, url: URL, rest: string, env: ServeEnv & { requestId: string }): Promise<Response> {
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
    const forwarded = same ? request : new Request(target, { method: request.method, headers: request.headers, body: bounded?.body ?? null, redirect: request.redirect, signal: request.signal, duplex: "half" } as RequestInit);
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

  async function fetchRoute(request: Request, env: ServeEnv | undefined): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    const requestId = env?.requestId ?? chooseRequestId(request.headers.get(REQUEST_ID_HEADER));
    const ip = env?.clientAddress ?? request.headers.get("cf-connecting-ip") ?? "";

    // Mounts, exclusions and routes are matched on the path the mounted app will route.
    // A runtime may hand over the target as the client wrote it (Deno keeps `/x/../y`): the URL
    // parser's form is the one matched and the one a mounted app gets.
    const routed = routingPath(url.href);
    for (const m of table.mounts) {
      if (!underPrefix(routed, m.prefix) || m.excludePrefixes.some((p) => underPrefix(routed, p))) continue;
      const rest = rawBelow(path, m.prefix);
      if (m.kind === "static") return serveStatic(m.dir, request, rest);
      return forwardToMount(m, request, url, rest, { ...env, requestId, mountPrefix: m.prefix, mountStripped: m.stripPrefix });
    }

    const routePath = routed.length > 1 ? routed.replace(/\/+$/, "") || "/" : routed;
    const found = match(request.method, routePath);
    if (!found) {
      const allow = allowedMethods(routePath);
      if (allow.length > 0) return errorResponse(405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${path}`, { allow: allow.join(", ") });
      return errorResponse(404, "NOT_FOUND", `no route for ${request.method} ${path}`);
    }
    const { entry, params } = found;
    if (!entry.plan) {
      if (options.rejectRawRoutes) return errorResponse(403, "RAW_ROUTES_DISABLED", "raw routes are disabled on this host: the route has no plan");
      if (entry.target.kind !== "raw") return internal("a raw route without a raw handler", requestId);
      return entry.target.handler(request, params);
    }
    return planned(request, url, entry, params, requestId, ip);
  }

  return {
    async loadScript(bundle) {
      if (!runtime) throw new Error("createRouteHost: a script needs the `runtime` option");
      try {
        const compiled = compileRegistrations(await runtime.load(bundle));
        script = compiled;
        table = buildTable();
        loadError = undefined;
      } catch (err) {
        loadError = err instanceof Error ? err.message : String(err);
        throw err;
      }
    },
    get loadError() {
      return loadError;
    },
    ready: () => runtime?.ready() ?? Promise.resolve(),
    registerPlanned(input, handler) {
      const plan = compileRoutePlan(input);
      hostRoutes.push({ plan, method: plan.method, pattern: plan.parsed, rawPattern: plan.pattern, target: { kind: "host", handler } });
      table = buildTable();
    },
    registerRaw(method, pattern, handler) {
      const compiled = compileRoutePlan({ method, pattern, public: true });
      hostRoutes.push({ method: compiled.method, pattern: compiled.parsed, rawPattern: pattern, target: { kind: "raw", handler } });
      table = buildTable();
    },
    routes() {
      const rows: RouteInfo[] = [];
      for (const m of table.mounts) rows.push({ kind: m.kind, pattern: m.prefix, access: m.kind, source: "script", at: m.at });
      for (const r of table.routes) {
        const source = r.target.kind === "script" || r.target.kind === "mount" ? "script" : "host";
        const at = r.target.kind === "script" || r.target.kind === "mount" ? r.target.at : undefined;
        if (!r.plan) {
          rows.push({ kind: "route", method: r.method, pattern: r.rawPattern, access: "raw", source });
          continue;
        }
        const p = r.plan;
        const row: RouteInfo = { kind: "route", method: p.method, pattern: p.pattern, name: p.name, access: p.public ? "public" : p.auth?.required ? "auth" : "auth?", resources: p.resources.map((x) => x.type), csrf: p.csrf, source };
        if (p.action !== undefined) row.action = p.action;
        if (p.audit !== undefined) row.audit = p.audit;
        if (at) row.at = at;
        rows.push(row);
      }
      return rows;
    },
    async fetch(request, env) {
      let response: Response;
      try {
        response = await fetchRoute(request, env);
      } catch (err) {
        const requestId = env?.requestId ?? "";
        response = internal(err instanceof Error ? err.message : String(err), requestId);
      }
      // The host's own refusals and misses, to a request that accepts HTML: a page (error-page.ts).
      return pageFor(request, response, { signIn: auth.authenticator?.signInUrl !== undefined, requestId: env?.requestId });
    },
    async close() {
      await runtime?.close();
    },
  };
}

