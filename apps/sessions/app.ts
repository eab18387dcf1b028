/** The session service as one Hono app under /api/v1. */
import { Hono } from "hono";
import { apiErrorHandler, apiNotFound } from "../../lib/http/errors.ts";
import { requestId } from "../../lib/http/request-id.ts";
import { accessLog, createLogger, errorFields, type Logger } from "../../lib/log.ts";
import type { SqlStore } from "../../lib/db/store.ts";

export interface SessionServiceOptions {
  store: SqlStore;
  logger?: Logger;
}

export function createApp(options: SessionServiceOptions) {
  const logger = options.logger ?? createLogger();
  const app = new Hono();
  app.use(requestId());
  app.use(accessLog(logger));
  app.onError(apiErrorHandler((err, c) => logger.error("unhandled error", { request_id: c.get("requestId" as never), ...errorFields(err) })));
  app.notFound(apiNotFound);
  const api = new Hono();
  api.get("/health", (c) => c.json({ status: "ok" }));
  app.route("/api/v1", api);
  return app;
}
