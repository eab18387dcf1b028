/**
 * workerd entry. The service's rows live in a Durable Object's SQLite storage unless a libSQL URL
 * is configured (`SESSIONS_DB`), in which case the libSQL web client reaches that server.
 */
import { DurableObject } from "cloudflare:workers";
import { createClient } from "@libsql/client/web";
import { durableObjectStore } from "../../lib/db/durable.ts";
import { libsqlStore } from "../../lib/db/libsql.ts";
import { createLogger } from "../../lib/log.ts";
import { createApp } from "./app.ts";

export interface SessionsWorkerEnv {
  SESSIONS: DurableObjectNamespace<SessionsObject>;
  SESSIONS_DB?: string;
  SESSIONS_DB_AUTH_TOKEN?: string;
  LOG_LEVEL?: string;
}

export class SessionsObject extends DurableObject<SessionsWorkerEnv> {
  private app?: ReturnType<typeof createApp>;

  override async fetch(request: Request): Promise<Response> {
    this.app ??= createApp({
      store: this.env.SESSIONS_DB
        ? libsqlStore(createClient({ url: this.env.SESSIONS_DB, authToken: this.env.SESSIONS_DB_AUTH_TOKEN }))
        : durableObjectStore(this.ctx.storage),
      logger: createLogger({ fields: { service: "sessions" }, level: (this.env.LOG_LEVEL as never) ?? "info" }),
    });
    return this.app.fetch(request, {});
  }
}

export default {
  fetch(request: Request, env: SessionsWorkerEnv): Promise<Response> {
    return env.SESSIONS.get(env.SESSIONS.idFromName("sessions")).fetch(request);
  },
} satisfies ExportedHandler<SessionsWorkerEnv>;
