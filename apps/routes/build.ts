/**
 * The one builder of a configured route host, called by the command line (cli.ts) and the Worker
 * (worker.ts) with what each read from its settings: the security services (auth/security.ts),
 * the store's resources, audit sink and script services, the mountables, and where handlers run.
 */
import type { SqlStore } from "#lib/db";
import type { StaticDirectory } from "#lib/http";
import type { Logger } from "#lib/log";
import type { FetchHandler } from "#lib/runtime";
import { hostSecurity, type HostSecuritySettings, sessionSecretFor } from "./auth/security.ts";
import { createRouteHost } from "./host/host.ts";
import { renderValue } from "./core/render.ts";
import type { AuditSink } from "./core/services.ts";
import type { RouteHost, RouteHostOptions } from "./core/types.ts";
import { storeServices } from "./script/script-services.ts";
import { logAuditSink } from "./store/audit-log.ts";
import { sqlAuditSink, sqlResourceResolver } from "./store/store.ts";
import { type RateLimitStore, sqlRateLimitStore } from "./store/rate-limits.ts";

/** Where audit events go: the store (`db`; the log when there is none), the log, nowhere; `auto`:
 * the store when there is one, else the log. */
export type AuditSetting = "auto" | "db" | "log" | "off";

export interface RouteHostBuild {
  logger: Logger;
  dev: boolean;
  /** Static files (`app.static`): the tree and the directory the script's paths are below. */
  files: { tree: StaticDirectory["tree"]; root: string };
  /** Assets modules (`require(name)` for `app.staticFromAssetsModule`). */
  assets: Record<string, StaticDirectory>;
  /** Resources, audit events and signed-in sessions; none: routes with resources answer 500. */
  store?: SqlStore;
  audit: AuditSetting;
  /** Sign-in, tokens and policy (the store and the resolved session key are added here). */
  security: Omit<HostSecuritySettings, "store">;
  /** `require("idp").handler()` and `require("sessions").handler()`. */
  mountables: { idp: FetchHandler; sessions?: FetchHandler };
  runtime: NonNullable<RouteHostOptions["runtime"]>;
  /** Where `.rateLimit` counters live (the Worker's store object); default: the store when there
   * is one (shared by every instance on it), else memory. */
  rateLimits?: RateLimitStore;
}

export function auditSinkFor(setting: AuditSetting, store: SqlStore | undefined, logger: Logger): AuditSink | undefined {
  if (setting === "off") return undefined;
  if (setting === "log" || !store) return logAuditSink(logger);
  return sqlAuditSink(store);
}

export async function buildRouteHost(options: RouteHostBuild): Promise<RouteHost> {
  const { store, logger } = options;
  // The session key: set, or kept in the database so signed-in sessions outlive a restart.
  const sessionSecret = await sessionSecretFor(options.security.sessionSecret, store);
  const security = hostSecurity({ ...options.security, sessionSecret, store });
  const host = createRouteHost({
    mountables: { idp: { handler: options.mountables.idp }, ...(options.mountables.sessions ? { sessions: { handler: options.mountables.sessions } } : {}) },
    dev: options.dev,
    renderer: renderValue,
    logger,
    files: options.files,
    assets: options.assets,
    session: security.session,
    auth: { ...security.auth, resources: store ? sqlResourceResolver(store) : undefined, audit: auditSinkFor(options.audit, store, logger) },
    services: storeServices(store),
    runtime: options.runtime,
    rateLimits: options.rateLimits ?? (store ? sqlRateLimitStore(store) : undefined),
  });
  security.register(host);
  return host;
}
