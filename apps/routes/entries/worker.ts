/**
 * workerd entry: `npx wrangler dev --env routes` (`npm run worker:routes`). The script is bundled
 * with the Worker: the build step of [env.routes] in wrangler.toml runs `routes bundle` on
 * `$ROUTES_SCRIPT` (default: the notes example, examples/routes/app.js, with its policy), and this
 * module imports the JSON it wrote. `app.static` serves the files beside the script from that
 * bundle, or from the R2 bucket bound as `STATIC` when there is one. Handlers run in a sandbox in
 * this isolate (workerd gives each isolate one thread).
 *
 * What the native modules reach here:
 * - `require("resources")`, `require("audit")` and the pipeline's resolver and audit sink: the
 *   RoutesStoreObject Durable Object's SQLite (one object, "routes"), or ROUTES_DB (libsql://...).
 * - `require("idp").handler()`: the service bound as IDP_SERVICE (a separately deployed identity
 *   provider Worker), else the provider in this Worker's own IdpObject (IDP_ISSUER "{origin}/idp"
 *   in wrangler.toml, so it answers under the /idp mount).
 * - `require("sessions").handler()`: the service bound as SESSIONS_SERVICE, else the session
 *   service in this Worker's own SessionsObject and SessionRuntimeObject, its web UI from the
 *   static assets bound as SESSIONS_UI.
 *
 * Vars (wrangler.toml or --var): the `ROUTES_*` settings of the `routes:` section, decoded by
 * config.ts as the command line decodes its environment, with the same defaults (a bad one is a
 * 500 naming it, at every request until it is fixed); those about the script, threads and the
 * listen address are the build step's or the command line's. Here ROUTES_ISSUER may be a path
 * such as /idp (this Worker's origin plus it); ROUTES_SESSION_SECRET should be set (otherwise each
 * isolate signs with its own random key); ROUTES_DB unset is the RoutesStoreObject, a libsql://
 * URL a server (ROUTES_DB_AUTH_TOKEN), none no store; ROUTES_TRUSTED_PROXY unset is cloudflare;
 * ROUTES_ALLOWED_HOSTS lists a deployment's hostname. Also ROUTES_POLICY (inline YAML or JSON;
 * overrides the bundled policy), LOG_LEVEL, ACCESS_LOG; the IDP_* and SESSIONS_* vars of the two
 * services for the ones in this Worker.
 */
/// <reference path="../../../lib/adapters/workerd/wasm.d.ts" />
/// <reference path="./worker-bundle.d.ts" />
import { DurableObject } from "cloudflare:workers";
import { createClient } from "@libsql/client/web";
import wasmModule from "../../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm";
import bundle from "routes-bundle";
import { durableObjectStore } from "#lib/db/durable";
import { libsqlStore } from "#lib/db/libsql";
import type { SqlRow, SqlStatement, SqlStore, SqlValue } from "#lib/db";
import { memoryFileTree, type R2BucketLike, r2FileTree } from "#lib/files";
import {
  clientView,
  envelopeMisdirected,
  errorEnvelope,
  type HostAllowlist,
  hostAllowlist,
  misdirectedAnswer,
  parseAllowedHosts,
  releaseUnreadBody,
  unframeable,
  withRequestId,
} from "#lib/http";
import { createLogger, type LogLevel } from "#lib/log";
import type { ServeEnv } from "#lib/runtime";
import { loadQuickJS } from "#lib/sandbox";
import { idpObjectFetch } from "../../idp/entries/worker.ts";
import { sessionsObjectFetch } from "../../sessions/entries/worker.ts";
import { devPage } from "../host/dev-page.ts";
import { withoutIssuerAlias } from "../host/issuer-alias.ts";
import { readPolicy } from "../auth/policy.ts";
import { issuerFor } from "../auth/security.ts";
import { buildRouteHost } from "../build.ts";
import { prepareRoutesStore } from "../store/store.ts";
import { type RateLimitHit, type RateLimitStore, sqlRateLimitStore } from "../store/rate-limits.ts";
import { bundledFiles } from "../script/read-bundle.ts";
import { inProcessScriptRuntime } from "../script/runtime.ts";
import { auditSetting, type RoutesSettings, routesSettingsFromVars, scriptLimits, securitySettings, trustedProxy } from "../config.ts";
import { firstRequestBanner } from "#lib/worker-banner";

// The other products' Durable Objects, so one `wrangler dev --env routes` serves all three.
export { IdpObject } from "../../idp/entries/worker.ts";
export { SessionRuntimeObject, SessionsObject } from "../../sessions/entries/worker.ts";

/** The bindings and the vars read here; the `ROUTES_*` settings are config.ts's. */
export interface RoutesWorkerEnv {
  STATIC?: R2Bucket;
  ROUTES_STORE?: DurableObjectNamespace<RoutesStoreObject>;
  ROUTES_DB_AUTH_TOKEN?: string;
  IDP_SERVICE?: Fetcher;
  SESSIONS_SERVICE?: Fetcher;
  /** The session service's web UI (static assets), for the session service in this Worker. */
  SESSIONS_UI?: Fetcher;
  /** This Worker's own identity provider and session service (wrangler.toml [env.routes]). */
  IDP?: DurableObjectNamespace;
  SESSIONS?: DurableObjectNamespace;
  /** The session service's access token, sent with every request of the /sessions mount. */
  SESSIONS_AUTH_TOKEN?: string;
  /** The issuer of the provider in IDP, "{origin}/idp" in wrangler.toml. */
  IDP_ISSUER?: string;
  /** A policy document (YAML or JSON), inline. */
  ROUTES_POLICY?: string;
  LOG_LEVEL?: string;
  ACCESS_LOG?: string;
  [name: string]: unknown;
}

/** The route host's SQL store: this object's SQLite, reached by RPC from the Worker's isolates. */
export class RoutesStoreObject extends DurableObject<RoutesWorkerEnv> {
  private readonly store: SqlStore;
  private readonly rateLimits: RateLimitStore;
  constructor(ctx: DurableObjectState, env: RoutesWorkerEnv) {
    super(ctx, env);
    this.store = durableObjectStore(ctx.storage);
    this.rateLimits = sqlRateLimitStore(this.store);
    void ctx.blockConcurrencyWhile(() => prepareRoutesStore(this.store));
  }
  query(sql: string, args?: SqlValue[]): Promise<SqlRow[]> {
    return this.store.query(sql, args);
  }
  execute(sql: string, args?: SqlValue[]): Promise<{ changes: number }> {
    return this.store.execute(sql, args);
  }
  batch(statements: SqlStatement[]): Promise<number[]> {
    return this.store.batch(statements);
  }
  /** One `.rateLimit` count, decided here in one call (this object runs one request at a time). */
  rateLimitHit(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitHit> {
    return this.rateLimits.hit(key, limit, windowMs, now);
  }
}

/** Rate-limit counters in the RoutesStoreObject, shared by every isolate of the Worker. */
function objectRateLimits(ns: DurableObjectNamespace<RoutesStoreObject>): RateLimitStore {
  return { hit: async (key, limit, windowMs, now) => (await ns.get(ns.idFromName("routes")).rateLimitHit(key, limit, windowMs, now)) as RateLimitHit };
}

/** A SqlStore whose statements run in the RoutesStoreObject. */
function objectStore(ns: DurableObjectNamespace<RoutesStoreObject>): SqlStore {
  const stub = () => ns.get(ns.idFromName("routes"));
  return {
    query: async <R extends SqlRow>(sql: string, args?: SqlValue[]) => (await stub().query(sql, args)) as unknown as R[],
    execute: async (sql, args) => stub().execute(sql, args),
    batch: async (statements) => stub().batch(statements),
    close: async () => {},
  };
}

async function openStore(env: RoutesWorkerEnv, db: string): Promise<SqlStore | undefined> {
  if (db === "none") return undefined;
  if (db) {
    const store = libsqlStore(createClient({ url: db, authToken: env.ROUTES_DB_AUTH_TOKEN }));
    await prepareRoutesStore(store);
    return store;
  }
  return env.ROUTES_STORE ? objectStore(env.ROUTES_STORE) : undefined;
}

type Fetch = (request: Request, env: RoutesWorkerEnv) => Promise<Response>;

/** The session service in this Worker: its web UI from the assets, the rest from its object. */
async function sessionsHere(request: Request, env: RoutesWorkerEnv): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (env.SESSIONS_UI && (request.method === "GET" || request.method === "HEAD") && (path === "/" || path.startsWith("/assets/"))) {
    return unframeable(await env.SESSIONS_UI.fetch(request));
  }
  return sessionsObjectFetch(request, env as never);
}

/**
 * The session service behind this host's sign-in: its requests carry SESSIONS_AUTH_TOKEN, the
 * token the service (in this Worker, or bound) asks of everyone; without it the service answers
 * loopback callers only, as `wrangler dev` is, never a deployment (docs/routes.md).
 */
function withSessionsToken(mounted: (request: Request) => Promise<Response>, env: RoutesWorkerEnv) {
  const token = env.SESSIONS_AUTH_TOKEN?.trim();
  if (!token) return mounted;
  return (request: Request) => {
    const headers = new Headers(request.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return mounted(new Request(request, { headers }));
  };
}

/** A bound service when there is one, else the product in this Worker, else a clear 500. */
function product(name: string, service: Fetcher | undefined, own: Fetch | undefined, env: RoutesWorkerEnv) {
  return async (request: Request) => {
    if (service) return service.fetch(request);
    if (own) return own(request, env);
    return Response.json(
      errorEnvelope(
        "INTERNAL",
        `require("${name}") has nothing to serve: bind ${name.toUpperCase()}_SERVICE or its Durable Objects (wrangler.toml [env.routes])`,
      ),
      { status: 500 },
    );
  };
}

type Served = { fetch: (request: Request) => Response | Promise<Response> };

const STATIC_ROOT = "/site";
let served: Promise<Served> | undefined;

async function build(env: RoutesWorkerEnv, settings: RoutesSettings, origin: string): Promise<Served> {
  const { values } = settings;
  const logger = createLogger({ fields: { service: "routes" }, level: (env.LOG_LEVEL as LogLevel | undefined) ?? "info" });
  const engine = await loadQuickJS({ wasmModule });
  const store = await openStore(env, values.db);
  const files = env.STATIC ? r2FileTree(env.STATIC as unknown as R2BucketLike) : memoryFileTree(bundledFiles(bundle.files, STATIC_ROOT.slice(1)));
  // Assets modules (`bundle --assets`), each a read-only tree of its own.
  const assets = Object.fromEntries(
    Object.entries(bundle.assets ?? {}).map(([name, files]) => [name, { tree: memoryFileTree(bundledFiles(files, "assets")), root: "/assets" }]),
  );
  const limits = scriptLimits(values);
  const dev = values.dev;
  const policy = env.ROUTES_POLICY
    ? await readPolicy(env.ROUTES_POLICY, "ROUTES_POLICY")
    : bundle.policy
    ? await readPolicy(bundle.policy, "the bundled policy")
    : undefined;
  const host = await buildRouteHost({
    logger,
    dev,
    files: { tree: files, root: STATIC_ROOT },
    assets,
    store,
    audit: auditSetting(values),
    security: securitySettings(values, issuerFor(values.issuer, origin), policy),
    mountables: {
      idp: withoutIssuerAlias(
        product("idp", env.IDP_SERVICE, env.IDP ? (r, e) => idpObjectFetch(r, e as never) : undefined, env),
        () => new URL((env.IDP_ISSUER ?? "").replace("{origin}", origin) || origin).pathname,
      ),
      sessions: withSessionsToken(product("sessions", env.SESSIONS_SERVICE, env.SESSIONS ? (r, e) => sessionsHere(r, e) : undefined, env), env),
    },
    // Up to SANDBOXES_PER_SIDE sandboxes, opened as concurrent requests need them: a handler waiting
    // on a timer or a service holds its sandbox, and the next request must not queue behind it.
    runtime: (natives, hostCalls) => inProcessScriptRuntime(engine, { natives, hostCalls, limits }),
    // The store object's counters unless a libSQL server holds the store (build.ts counts there).
    rateLimits: !values.db && env.ROUTES_STORE ? objectRateLimits(env.ROUTES_STORE) : undefined,
  });
  await host.loadScript(bundle.script);
  // The platform sets CF-Connecting-IP and a client cannot: the default proxy is "cloudflare".
  const proxy = trustedProxy(settings, "cloudflare");
  // Dev mode: the plan table and the plan as OpenAPI under /_routes, as on the command line.
  const devAnswer = (request: Request) => (dev ? devPage(request, host, bundle.script.entry) : undefined);
  return withRequestId({
    // The request id withRequestId chose travels on in `env`: the host takes it, not another.
    fetch: (request: Request, env?: ServeEnv) =>
      devAnswer(request) ?? host.fetch(request, { ...env, clientAddress: clientView(request, undefined, proxy).address }),
  }, {
    accessLog: env.ACCESS_LOG === "off" ? undefined : logger,
  });
}

/** The settings, decoded at the first request (vars being fixed), and the names this Worker answers
 * (wrangler dev passes the Host on; a deployment's own hostname comes from ROUTES_ALLOWED_HOSTS, or
 * an absolute ROUTES_ISSUER's host). */
let configured: { settings: RoutesSettings; hosts: HostAllowlist } | undefined;

/** Where to go, printed at the first request (the Worker learns its origin there). */
let banner: ((request: Request) => void) | undefined;
const bannerFor = (env: RoutesWorkerEnv, { values }: RoutesSettings) =>
  firstRequestBanner("route host", (origin) => {
    const issuer = values.issuer;
    const own = issuer.startsWith("/");
    return [
      ["home", `${origin}/`],
      ["sign-in", issuer ? `${origin}/auth/login (at ${own ? origin + issuer : issuer})` : undefined],
      ["provider", own ? `${origin}${issuer}: this script's own; who is signed in: ${origin}${issuer}/debug/ui` : undefined],
      ["session console", env.SESSIONS_UI ? `${origin}/sessions/ (if the script mounts the session service, as the notes example does)` : undefined],
      ["dev page", values.dev ? `${origin}/_routes` : undefined],
    ];
  });

function configure(env: RoutesWorkerEnv): { settings: RoutesSettings; hosts: HostAllowlist } {
  const settings = routesSettingsFromVars(env);
  const { values } = settings;
  return { settings, hosts: hostAllowlist({ urls: [values.issuer], hosts: parseAllowedHosts(values["allowed-hosts"]) }) };
}

export default {
  async fetch(request: Request, env: RoutesWorkerEnv): Promise<Response> {
    try {
      configured ??= configure(env);
    } catch (err) {
      return Response.json(errorEnvelope("INTERNAL", `configuration error: ${(err as Error).message}`), { status: 500 });
    }
    const { settings, hosts } = configured;
    if (env.LOG_LEVEL !== "silent") (banner ??= bannerFor(env, settings))(request);
    // Before anything is built from the request's origin (the issuer of a mounted provider).
    const misdirected = misdirectedAnswer(hosts, request, envelopeMisdirected);
    if (misdirected) return misdirected;
    served ??= build(env, settings, new URL(request.url).origin);
    let app: Served;
    try {
      app = await served;
    } catch (err) {
      served = undefined;
      return Response.json(errorEnvelope("INTERNAL", `the route host could not start: ${(err as Error).message}`), { status: 500 });
    }
    const response = await app.fetch(request);
    await releaseUnreadBody(request, response); // a refusal goes out now, not after a body nobody reads
    return response;
  },
} satisfies ExportedHandler<RoutesWorkerEnv>;
