/**
 * workerd entry. Every request goes to one Durable Object (SessionsObject), which runs the
 * service; each live session's sandbox lives in a Durable Object of its own
 * (SessionRuntimeObject, named by the session id), so every request for a session reaches its
 * runtime. Rows live in SessionsObject's SQLite storage unless a libSQL URL is
 * configured (`SESSIONS_DB`, with `SESSIONS_DB_AUTH_TOKEN`), in which case the libSQL web client
 * reaches that server. Worktrees and the library directory live in the R2 bucket `WORKTREES`
 * (keys `<absolute path without the leading slash>/<file>`), filled through the upload routes.
 * Other vars: SESSIONS_MODULES (catalog), SESSIONS_LIBRARY_DIR (default /.libraries), LOG_LEVEL.
 */
/// <reference path="../../lib/adapters/wasm.d.ts" />
import { DurableObject } from "cloudflare:workers";
import { createClient } from "@libsql/client/web";
import wasmModule from "../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm";
import { durableObjectStore } from "#lib/db/durable";
import { libsqlStore } from "#lib/db/libsql";
import { r2FileTree } from "#lib/files";
import { errorEnvelope } from "#lib/http";
import { createLogger, type LogLevel } from "#lib/log";
import { createSessionService, type SessionService } from "./app.ts";
import { parseModuleCatalog, sandboxHostEnv } from "./domain/modules.ts";
import { durableRuntimes, sessionRuntimeObject } from "./live/durable.ts";
import { MODULE_CATALOG } from "./live/types.ts";

export interface SessionsWorkerEnv {
  SESSIONS: DurableObjectNamespace<SessionsObject>;
  SESSION_RUNTIME: DurableObjectNamespace;
  WORKTREES: R2Bucket;
  SESSIONS_DB?: string;
  SESSIONS_DB_AUTH_TOKEN?: string;
  SESSIONS_MODULES?: string;
  SESSIONS_LIBRARY_DIR?: string;
  LOG_LEVEL?: string;
  ACCESS_LOG?: string;
}

export class SessionsObject extends DurableObject<SessionsWorkerEnv> {
  private service?: Promise<SessionService>;

  private async build(): Promise<SessionService> {
    const env = this.env;
    const logger = createLogger({ fields: { service: "sessions" }, level: (env.LOG_LEVEL as LogLevel | undefined) ?? "info" });
    const modules = parseModuleCatalog(env.SESSIONS_MODULES ?? MODULE_CATALOG.join(","));
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

export default {
  async fetch(request: Request, env: SessionsWorkerEnv): Promise<Response> {
    // The body is buffered before it crosses to the object, so a handler that answers without
    // reading it (a 404, a 409) cannot break the request stream.
    const body = request.method === "GET" || request.method === "HEAD" ? null : await request.arrayBuffer();
    const forwarded = new Request(request.url, { method: request.method, headers: request.headers, body });
    return env.SESSIONS.get(env.SESSIONS.idFromName("sessions")).fetch(forwarded);
  },
} satisfies ExportedHandler<SessionsWorkerEnv>;
