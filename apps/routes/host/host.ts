/**
 * The route host: `createRouteHost(options)` gives a `fetch(Request) => Response` handler that
 * serves the routes, mounts and static directories a script registered (through `httpmod` in a
 * sandbox), and planned routes the host registers itself.
 *
 * It is a Hono app, built from the registrations (and built again when a script loads or the host
 * adds a route): mounts and static mounts first, in registration order; then routes, the first
 * registered match winning (host routes before script routes); HEAD falls back to GET (Hono's
 * rule). Each planned route runs its pipeline as stages chosen from its plan (pipeline/compose.ts),
 * and only the handler crosses into a sandbox. A miss is 405 with Allow when another method would
 * match, else 404.
 */
import { type Handler, Hono } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import { requestIdOf, type StaticDirectory } from "#lib/http";
import type { FetchHandler } from "#lib/runtime";
import { stagesFor } from "../pipeline/compose.ts";
import type { PipelineEnv } from "../pipeline/state.ts";
import type { ScriptHostCalls, ScriptNatives } from "../script/script-sandbox.ts";
import { memoryRateLimitStore } from "../store/rate-limits.ts";
import { DEV_PAGE_PATH } from "./dev-page.ts";
import { pageFor } from "../core/error-page.ts";
import { mountsMiddleware } from "./mounts.ts";
import { compileRoutePlan, routingPath } from "../core/plan.ts";
import { errorResponse, internalError, replyResponse } from "../core/reply.ts";
import { DEFAULT_SESSION_COOKIE, randomHex, sessionCookies } from "../core/session.ts";
import { compileRegistrations, plannedEntry, type RouteEntry, routeRows, type ScriptTable } from "./table.ts";
import type { RawHandler, RouteHost, RouteHostOptions } from "../core/types.ts";

export type * from "../core/types.ts";

const KNOWN_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** The path routes are matched on: the one Hono would route, without a trailing slash. */
function routePathOf(url: string): string {
  const routed = routingPath(url);
  return routed.length > 1 ? routed.replace(/\/+$/, "") || "/" : routed;
}

/** The methods some route takes at a path (for 405's Allow), over a router made once per table. */
function allowedMethods(routes: RouteEntry[]): (path: string) => string[] {
  const router = new TrieRouter<number>();
  routes.forEach((r, i) => router.add(r.method, r.pattern.path, i));
  const others = [...new Set(routes.map((r) => r.method))].filter((m) => m !== "ALL" && !KNOWN_METHODS.includes(m));
  return (path) => {
    const matches = (m: string) => (router.match(m, path)[0] as unknown[]).length > 0;
    const found = new Set(KNOWN_METHODS.filter(matches));
    if (found.has("GET")) found.add("HEAD");
    for (const m of others) if (matches(m)) found.add(m);
    return [...found];
  };
}

export function createRouteHost(options: RouteHostOptions = {}): RouteHost {
  const dev = options.dev ?? false;
  const auth = options.auth ?? {};
  const log = options.logger;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const sessions = sessionCookies({
    secret: options.session?.secret ?? randomHex(32),
    cookieName: options.session?.cookieName ?? DEFAULT_SESSION_COOKIE,
    secure: options.session?.secure ?? false,
  });

  // Tokens a script's natives hand out; only the host knows what they stand for.
  const mountTokens = new Map<string, FetchHandler>();
  const assetTokens = new Map<string, StaticDirectory>();
  const services = options.services ?? {};
  const natives: ScriptNatives = {
    mountables: {},
    assets: {},
    staticFiles: options.files !== undefined,
    services: Object.fromEntries(Object.entries(services).map(([module, fns]) => [module, Object.keys(fns)])),
  };
  for (const [module, fns] of Object.entries(options.mountables ?? {})) {
    natives.mountables[module] = {};
    for (const [fn, handler] of Object.entries(fns)) {
      const token = randomHex(16);
      mountTokens.set(token, handler);
      natives.mountables[module]![fn] = token;
    }
  }
  for (const [name, dir] of Object.entries(options.assets ?? {})) {
    const token = randomHex(16);
    assetTokens.set(token, dir);
    natives.assets[name] = token;
  }
  const hostCalls: ScriptHostCalls = async (module, fn, args) => {
    const f = Object.hasOwn(services, module) && Object.hasOwn(services[module]!, fn) ? services[module]![fn]! : undefined;
    if (!f) throw new Error(`${module}.${fn} is not a host service`);
    return f(...args);
  };
  const runtime = options.runtime?.(natives, hostCalls);
  const rateLimits = options.rateLimits ?? memoryRateLimitStore();
  const deps = { auth, sessions, maxBodyBytes, dev, log, renderer: options.renderer, now: options.now ?? (() => new Date()), runtime, rateLimits };
  const compileDeps = {
    mountTokens,
    assetTokens,
    files: options.files,
    stages: (plan: Parameters<typeof stagesFor>[0], target: Parameters<typeof stagesFor>[1]) => stagesFor(plan, target, deps),
  };

  const hostRoutes: RouteEntry[] = [];
  let script: ScriptTable = { mounts: [], routes: [] };
  let loadError: string | undefined;
  let app = build();

  function build() {
    const routes = [...hostRoutes, ...script.routes];
    const mounts = script.mounts;
    const hono = new Hono<PipelineEnv>({ getPath: (request) => routePathOf(request.url) });
    // `ALL` is Hono's own name for every method.
    const on = hono.on.bind(hono) as (method: string, path: string, ...handlers: Handler<PipelineEnv>[]) => unknown;
    // The host's own routes (/auth/login, /auth/callback, /auth/logout) before the script's mounts:
    // a single-page app or mount at "/" must not take sign-in and sign-out away.
    for (const r of hostRoutes) on(r.method, r.pattern.path, ...r.handlers);
    if (mounts.length > 0) hono.use("*", mountsMiddleware(mounts, maxBodyBytes));
    for (const r of script.routes) on(r.method, r.pattern.path, ...r.handlers);
    const allowedAt = allowedMethods(routes);
    hono.notFound((c) => {
      const path = new URL(c.req.url).pathname;
      const allow = allowedAt(c.req.path);
      if (allow.length > 0) return errorResponse(405, "METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${path}`, { allow: allow.join(", ") });
      // In dev mode a miss may be a route the broken edit declares: say so, and where the error is.
      const broken = dev && loadError !== undefined
        ? ` (the script's last edit did not load, so the previous routes are served: ${loadError.split("\n")[0]}; see ${DEV_PAGE_PATH})`
        : "";
      return errorResponse(404, "NOT_FOUND", `no route for ${c.req.method} ${path}${broken}`);
    });
    hono.onError((err, c) => replyResponse(err, { dev, log, requestId: c.env.requestId, route: c.get("pipeline")?.plan.name }));
    return { hono, routes, mounts };
  }

  function rawEntry(method: string, pattern: string, handler: RawHandler): RouteEntry {
    const compiled = compileRoutePlan({ method, pattern, public: true });
    const run: Handler<PipelineEnv> = (c) => {
      if (options.rejectRawRoutes) return errorResponse(403, "RAW_ROUTES_DISABLED", "raw routes are disabled on this host: the route has no plan");
      return handler(c.req.raw, c.req.param() as Record<string, string>);
    };
    return { method: compiled.method, pattern: compiled.parsed, rawPattern: pattern, source: "host", handlers: [run] };
  }

  return {
    async loadScript(bundle) {
      if (!runtime) throw new Error("createRouteHost: a script needs the `runtime` option");
      try {
        script = compileRegistrations(await runtime.load(bundle), compileDeps);
        app = build();
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
      hostRoutes.push(plannedEntry(compileRoutePlan(input), { kind: "host", handler }, "host", compileDeps));
      app = build();
    },
    registerRaw(method, pattern, handler) {
      hostRoutes.push(rawEntry(method, pattern, handler));
      app = build();
    },
    routes: () => routeRows(app.mounts, app.routes),
    async fetch(request, env) {
      // Chosen at the entry (withRequestId, or the Node adapter): taken here, not chosen again.
      const requestId = requestIdOf(request, env);
      let response: Response;
      try {
        response = await app.hono.fetch(request, { ...env, requestId });
      } catch (err) {
        response = internalError(err instanceof Error ? err.message : String(err), { dev, log, requestId: env?.requestId ?? "" });
      }
      // The host's own refusals and misses, to a request that accepts HTML: a page (error-page.ts).
      return pageFor(request, response, { signIn: auth.authenticator?.signInUrl !== undefined, requestId: env?.requestId });
    },
    async close() {
      await runtime?.close();
    },
  };
}
