/**
 * workerd entry. Every request goes to one Durable Object (SessionsObject), which runs the
 * service; each live session's sandbox lives in a Durable Object of its own
 * (SessionRuntimeObject, named by the session id), so every request for a session reaches its
 * runtime. Rows live in SessionsObject's SQLite storage unless a libSQL URL is
 * configured (`SESSIONS_DB`, with `SESSIONS_DB_AUTH_TOKEN`), in which case the libSQL web client
 * reaches that server. Worktrees and the library directory live in the R2 bucket `WORKTREES`
 * (keys `<absolute path without the leading slash>/<file>`), filled through the upload routes.
 * Other vars: SESSIONS_MODULES (catalog), SESSIONS_LIBRARY_DIR (default /.libraries), LOG_LEVEL,
 * SESSIONS_AUTH_TOKEN (a secret: `wrangler secret put`). A deployed Worker is reachable from
 * anywhere, so without a token the API answers loopback callers only (`CF-Connecting-IP`, which
 * Cloudflare sets and `wrangler dev` sets to the local peer): a deployment needs the token.
 * Worktree roots do not apply: worktrees are prefixes of a bucket that holds no host files.
 */
/// <reference path="../../../lib/adapters/workerd/wasm.d.ts" />
import { DurableObject } from "cloudflare:workers";
import { createClient } from "@libsql/client/web";
import wasmModule from "../../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm";
import { durableObjectStore } from "#lib/db/durable";
import { libsqlStore } from "#lib/db/libsql";
import { r2FileTree } from "#lib/files";
import {
  accessTokenProblem,
  envelopeMisdirected,
  errorEnvelope,
  type HostAllowlist,
  hostAllowlist,
  misdirectedAnswer,
  parseAllowedHosts,
  unframeable,
} from "#lib/http";
import { createLogger, type LogLevel } from "#lib/log";
import { boundedRequestBody, createSessionService, type SessionService } from "../app.ts";
import { parseModuleCatalog, sandboxHostEnv } from "../domain/modules.ts";
import { durableRuntimes, sessionRuntimeObject } from "../live/durable.ts";
import { MODULE_CATALOG } from "../live/types.ts";
import { firstRequestBanner } from "#lib/worker-banner";

export interface SessionsWorkerEnv {
  SESSIONS: DurableObjectNamespace<SessionsObject>;
  SESSION_RUNTIME: DurableObjectNamespace;
  WORKTREES: R2Bucket;
  SESSIONS_DB?: string;
  SESSIONS_DB_AUTH_TOKEN?: string;
  SESSIONS_MODULES?: string;
  SESSIONS_LIBRARY_DIR?: string;
  SESSIONS_AUTH_TOKEN?: string;
  /** Host names answered beyond loopback and localhost, comma-separated (* for any). */
  SESSIONS_ALLOWED_HOSTS?: string;
  /** The web UI (wrangler.toml [env.sessions.assets], run by the Worker first). */
  ASSETS?: Fetcher;
  LOG_LEVEL?: string;
  ACCESS_LOG?: string;
}

export class SessionsObject extends DurableObject<SessionsWorkerEnv> {
  private service?: Promise<SessionService>;

  private async build(): Promise<SessionService> {
    const env = this.env;
    const logger = createLogger({ fields: { service: "sessions" }, level: (env.LOG_LEVEL as LogLevel | undefined) ?? "info" });
    const modules = parseModuleCatalog(env.SESSIONS_MODULES ?? MODULE_CATALOG.join(","));
    const token = env.SESSIONS_AUTH_TOKEN?.trim() || undefined;
    const tokenProblem = token === undefined ? undefined : accessTokenProblem(token);
    if (tokenProblem) throw new Error(`SESSIONS_AUTH_TOKEN ${tokenProblem}`);
    const files = r2FileTree(env.WORKTREES);
    const store = env.SESSIONS_DB
      ? libsqlStore(createClient({ url: env.SESSIONS_DB, authToken: env.SESSIONS_DB_AUTH_TOKEN }))
      : durableObjectStore(this.ctx.storage);
    const live = durableRuntimes(env.SESSION_RUNTIME);
    const service = createSessionService({
      store,
      live,
      worktrees: files,
      libraries: { tree: files, root: env.SESSIONS_LIBRARY_DIR ?? "/.libraries" },
      modules,
      logger,
      accessLog: env.ACCESS_LOG !== "off",
      fileUploads: true,
      access: token ? { token } : { loopbackOnly: true },
    });
    await service.ready;
    return service;
  }

  override async fetch(request: Request): Promise<Response> {
    this.service ??= this.build();
    let service: SessionService;
    try {
      service = await this.service;
    } catch (err) {
      // Bad configuration or an unusable store: say so, and try again with the next request.
      this.service = undefined;
      return Response.json(errorEnvelope("INTERNAL", `the session service could not start: ${(err as Error).message}`), { status: 500 });
    }
    return service.app.fetch(request, {});
  }
}

/** One session's sandbox; the catalog and host variables come from the same vars as the service's. */
export const SessionRuntimeObject = sessionRuntimeObject<SessionsWorkerEnv>({
  wasmModule,
  worktrees: (env) => env.WORKTREES,
  hostEnv: (env) => sandboxHostEnv(env as unknown as Record<string, unknown>),
  modules: (env) => parseModuleCatalog(env.SESSIONS_MODULES ?? MODULE_CATALOG.join(",")),
});

/**
 * The service's requests into its object, without the host check: the route host's Worker calls
 * this for its /sessions mount after its own check.
 */
export async function sessionsObjectFetch(request: Request, env: SessionsWorkerEnv): Promise<Response> {
  // The body is buffered before it crosses to the object, so a handler that answers without
  // reading it (a 404, a 409) cannot break the request stream; never more of it than the service
  // would read (a declared length over that is refused before anything is read).
  const body = request.method === "GET" || request.method === "HEAD" ? null : await boundedRequestBody(request);
  if (body instanceof Response) return body;
  // `manual`: the sign-in link's redirect goes back to the browser (a stub would follow it itself).
  const forwarded = new Request(request.url, { method: request.method, headers: request.headers, body, redirect: "manual" });
  return env.SESSIONS.get(env.SESSIONS.idFromName("sessions")).fetch(forwarded);
}

/** The web UI from the assets binding (the Worker runs first, so the UI's page gets the host
 * check and the framing headers too); undefined for anything else. */
async function webUi(request: Request, env: SessionsWorkerEnv): Promise<Response | undefined> {
  if (!env.ASSETS || (request.method !== "GET" && request.method !== "HEAD")) return undefined;
  const url = new URL(request.url);
  if (url.pathname !== "/" && !url.pathname.startsWith("/assets/")) return undefined;
  // The sign-in link (`/?token=`) goes to the service, which sets the cookie (routes/access.ts).
  if (url.searchParams.has("token")) return undefined;
  return unframeable(await env.ASSETS.fetch(request));
}

/** The names this Worker answers (SESSIONS_ALLOWED_HOSTS beyond loopback and localhost). */
let hosts: HostAllowlist | undefined;

/** Where to go, printed at the first request (the Worker learns its origin there). */
const banner = firstRequestBanner("session service", (origin) => [
  ["web UI", `${origin}/`],
  ["API", `${origin}/api/v1`],
  ["OpenAPI", `${origin}/api/v1/openapi.json`],
  ["worktrees", `no disk here: PUT files to ${origin}/api/v1/worktree-files?root=/demo&path=init.js first (README, "Run code in a session")`],
]);

export default {
  async fetch(request: Request, env: SessionsWorkerEnv): Promise<Response> {
    if (env.LOG_LEVEL !== "silent") banner(request);
    try {
      hosts ??= hostAllowlist({ hosts: parseAllowedHosts(env.SESSIONS_ALLOWED_HOSTS) });
    } catch (err) {
      return Response.json(errorEnvelope("INTERNAL", `configuration error: ${(err as Error).message}`), { status: 500 });
    }
    return misdirectedAnswer(hosts, request, envelopeMisdirected) ?? (await webUi(request, env)) ?? sessionsObjectFetch(request, env);
  },
} satisfies ExportedHandler<SessionsWorkerEnv>;
