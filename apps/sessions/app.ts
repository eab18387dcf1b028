/**
 * The session service as one Hono app under /api/v1.
 *
 * `createSessionService(options)` takes everything runtime-specific as parameters (the SQL store,
 * the live runtimes, the worktree and library file trees, the clock), so the entry files stay a
 * few lines. Migrations and restart recovery run once at creation; every request waits for them.
 */
import { type Context, Hono } from "hono";
import { applyMigrations, type SqlStore } from "#lib/db";
import { type FileTree, FileTreeError, type Roots } from "#lib/files";
import {
  ApiError,
  apiErrorHandler,
  apiNotFound,
  BodyLimitError,
  crossSite,
  errorEnvelope,
  isUnsafeMethod,
  readBoundedBytes,
  serveStatic,
  type StaticDirectory,
  unframeable,
  withRequestId,
} from "#lib/http";
import { createLogger, errorFields, type Logger } from "#lib/log";
import type { ProcessMemory, ServeEnv } from "#lib/runtime";
import type { ServiceContext } from "./domain/context.ts";
import { ERROR_STATUS, SessionServiceError } from "./domain/errors.ts";
import { fileError } from "./domain/files.ts";
import type { LibraryDirectory } from "./domain/libraries.ts";
import type { Clock } from "./domain/records.ts";
import type { RecorderOptions } from "./domain/recorder.ts";
import { recoverAfterRestart, runtimesLost } from "./domain/sessions.ts";
import { type LiveRuntimes, MODULE_CATALOG, type ModuleName } from "./live/types.ts";
import { registerAccess, type SessionsAccess } from "./routes/access.ts";
import { bodyRefusal, MAX_BODY_BYTES, mountApi } from "./routes/api.ts";
import { registerEvents } from "./routes/events.ts";
import { registerExecutions } from "./routes/executions.ts";
import { registerFileUploads } from "./routes/files.ts";
import { registerOpenApi } from "./routes/openapi.ts";
import { registerRuntime } from "./routes/runtime.ts";
import { registerSessions } from "./routes/sessions.ts";
import { registerTemplates } from "./routes/templates.ts";
import { SESSION_MIGRATIONS } from "./store/migrations.ts";

const API_VERSION = "1.0.0";

interface SessionServiceOptions {
  store: SqlStore;
  live: LiveRuntimes;
  /** Where worktrees live (host file system on Node and Deno, R2 on workerd). */
  worktrees: FileTree;
  /** The library directory. */
  libraries: LibraryDirectory;
  /** The module catalog of this deployment (default: all of MODULE_CATALOG). */
  modules?: readonly ModuleName[];
  /** Serve PUT /worktree-files and /library-files (only where files cannot be put otherwise: workerd). */
  fileUploads?: boolean;
  clock?: Clock;
  newId?: () => string;
  logger?: Logger;
  /** One log line per request (default true; off under `wrangler dev`, which logs each request). */
  accessLog?: boolean;
  recorder?: RecorderOptions;
  /** The process's memory for GET /runtime/memory (Node, Deno: `runtime.memoryUsage`). */
  memory?: () => ProcessMemory;
  /** The built web UI (apps/sessions/ui), served at `/` and `/assets/*` when given. */
  ui?: StaticDirectory;
  /** The directories a session's `worktree_path` must be inside (host file system); none: any. */
  worktreeRoots?: Roots;
  /** Who may use the API and the UI (routes/access.ts); default: whoever can connect. */
  access?: SessionsAccess;
}

export interface SessionService {
  app: Hono;
  /** Settles when migrations and restart recovery are done (requests wait for it anyway). */
  ready: Promise<void>;
  /** Wire to `LiveRuntimeOptions.onLost`: marks those sessions crashed. */
  runtimesLost(sessionIds: string[], reason: string): void;
  /** Frees every live runtime; executions running then end as `error` with a system event
   * (the store belongs to the caller: close it after the server has drained). */
  shutdown(): Promise<void>;
}

/** The service's one mapping from errors to HTTP: domain errors get their status from
 * ERROR_STATUS and become ApiErrors, which `apiErrorHandler` writes as the error envelope; anything
 * else stays a logged 500 INTERNAL there. */
function toApiError(err: Error): Error {
  if (err instanceof SessionServiceError) return new ApiError(ERROR_STATUS[err.code], err.code, err.message, err.details, err.headers);
  if (err instanceof FileTreeError) return toApiError(fileError(err));
  return err;
}

/**
 * A request's body, read up to the largest any operation takes, or the API's refusal (413, or 400
 * for a body that broke off): for a front that must hold the body before it hands the request on
 * (the Worker's, to its Durable Object), so that it never buffers more than the service would read.
 * The operation's own limit applies after.
 */
export async function boundedRequestBody(request: Request): Promise<Uint8Array<ArrayBuffer> | Response> {
  try {
    return (await readBoundedBytes(request, MAX_BODY_BYTES)) as Uint8Array<ArrayBuffer>;
  } catch (err) {
    if (!(err instanceof BodyLimitError)) throw err;
    const refusal = toApiError(bodyRefusal(err, MAX_BODY_BYTES)) as ApiError;
    return Response.json(errorEnvelope(refusal.code, refusal.message, refusal.details), { status: refusal.status, headers: refusal.headers });
  }
}

export function createSessionService(options: SessionServiceOptions): SessionService {
  const logger = options.logger ?? createLogger({ fields: { service: "sessions" } });
  const ctx: ServiceContext = {
    memory: options.memory,
    store: options.store,
    live: options.live,
    worktrees: options.worktrees,
    worktreeUploads: options.fileUploads ?? false,
    worktreeRoots: options.worktreeRoots,
    libraries: options.libraries,
    modules: options.modules ?? MODULE_CATALOG,
    clock: options.clock ?? Date.now,
    newId: options.newId ?? (() => crypto.randomUUID()),
    logger,
    liveSessions: new Map(),
    busy: new Set(),
    recorders: new Map(),
    stopping: false,
    recorderOptions: {
      ...options.recorder,
      onWriteError: options.recorder?.onWriteError ?? ((err) => logger.warn("event batch write failed; retried at the end", errorFields(err))),
    },
  };

  const ready = (async () => {
    await applyMigrations(ctx.store, SESSION_MIGRATIONS);
    const { adopted, ...recovered } = await recoverAfterRestart(ctx);
    if (recovered.sessions || recovered.executions) logger.info("closed what a previous run left alive", recovered);
    if (adopted) logger.info("live sessions whose runtimes outlived the service's memory kept live", { sessions: adopted });
  })();
  ready.catch((err) => logger.error("session store could not be prepared", errorFields(err)));

  const app = new Hono();
  const handle = apiErrorHandler((err, c) => logger.error("unhandled error", { request_id: (c.env as ServeEnv).requestId, ...errorFields(err) }));
  app.onError((err: Error, c: Context) => handle(toApiError(err), c));
  app.notFound(apiNotFound);
  registerAccess(app, options.access ?? {});

  const api = new Hono();
  api.use(async (c, next) => {
    // A page of another site (or one rebound to this host's name) may make a browser send a
    // POST here: a request the browser says another origin started changes nothing.
    if (isUnsafeMethod(c.req.method) && crossSite(c.req.raw)) {
      throw new SessionServiceError(
        "CROSS_SITE_REQUEST",
        "a web page of another origin sent this request; the API takes it from programs or this service's own UI",
      );
    }
    await ready;
    await next();
  });
  // The operations (hono-openapi: each described, with its validators), then mounted with the 405s.
  const routes = new Hono();
  registerRuntime(routes, ctx);
  registerTemplates(routes, ctx);
  registerSessions(routes, ctx);
  registerExecutions(routes, ctx);
  registerEvents(routes, ctx);
  if (options.fileUploads) registerFileUploads(routes, ctx);
  registerOpenApi(routes, API_VERSION);
  mountApi(api, routes);
  app.route("/api/v1", api);
  if (options.ui) {
    const ui = options.ui;
    // The UI talks to the API with relative URLs, so it works under a mount prefix too.
    app.on(["GET", "HEAD"], "/", async (c) => unframeable(await serveStatic(ui, c.req.raw, "index.html")));
    app.on(["GET", "HEAD"], "/assets/*", async (c) => unframeable(await serveStatic(ui, c.req.raw, c.req.path)));
  }
  withRequestId(app, { accessLog: options.accessLog === false ? undefined : logger });

  return {
    app,
    ready,
    runtimesLost: (ids, reason) => {
      runtimesLost(ctx, ids, reason).catch((err) => logger.error("could not mark lost runtimes crashed", { session_ids: ids, ...errorFields(err) }));
    },
    shutdown: () => {
      ctx.stopping = true;
      return ctx.live.shutdown();
    },
  };
}
