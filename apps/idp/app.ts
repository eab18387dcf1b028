/** The identity provider as one Hono app. */
import { Hono } from "hono";
import { requestId } from "../../lib/http/request-id.ts";
import { accessLog, createLogger, type Logger } from "../../lib/log.ts";

export interface IdpOptions {
  issuer: string;
  logger?: Logger;
}

export function createApp(options: IdpOptions) {
  const logger = options.logger ?? createLogger();
  const app = new Hono();
  app.use(requestId());
  app.use(accessLog(logger));
  app.get("/healthz", (c) => c.text("ok"));
  return app;
}
