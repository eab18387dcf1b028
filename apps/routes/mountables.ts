/**
 * Mountables the command line installs, so one script can serve the other products behind its
 * own origin:
 * - `app.mount("/idp", require("idp").handler())` serves the identity provider in this process,
 *   its issuer `<origin>/idp` (the mount's prefix, whether or not it is stripped);
 * - `require("sessions").handler()` serves the session service's API (and its web UI when
 *   built), its sandboxes on this host's threads, its rows in ROUTES_SESSIONS_DB (default `:memory:`, so it never shares a file
 *   with a session service started beside it).
 */
import { openSqlStore } from "../../lib/db/open.ts";
import type { Logger } from "../../lib/log.ts";
import type { FetchHandler, HostRuntime } from "../../lib/runtime.ts";
import { webUi, type SessionsHost } from "../sessions/cli.ts";
import { withoutIssuerAlias } from "./issuer-alias.ts";

export interface IdpMountOptions {
  logger?: Logger;
  /** IdP options from the environment (IDP_USERS, IDP_CLIENT_ID, ...), as the IdP reads them. */
  env?: Record<string, string | undefined>;
}

/** The identity provider as a handler, built on first use for the prefix it is mounted at. */
export function idpMountable(options: IdpMountOptions = {}): FetchHandler {
  const apps = new Map<string, Promise<{ fetch: FetchHandler }>>();
  const build = async (prefix: string) => {
    // Loaded on first use: a host that mounts no IdP never pays for it.
    const [{ createApp }, { optionsFromEnv }] = await Promise.all([import("../idp/app.ts"), import("../idp/env-options.ts")]);
    const fromEnv = await optionsFromEnv(options.env ?? {});
    // No access line of its own: the route host logs every request it serves, mounts included.
    const app = createApp({ ...fromEnv, issuer: `{origin}${prefix === "/" ? "" : prefix}`, logger: options.logger, accessLog: false });
    return { fetch: (request: Request, env: Parameters<FetchHandler>[1]) => app.fetch(request, env) };
  };
  // Its issuer is `<origin><prefix>`: the issuer's path is the mount's prefix.
  return withoutIssuerAlias(async (request, env) => {
    const prefix = env.mountPrefix ?? "/";
    let app = apps.get(prefix);
    if (!app) apps.set(prefix, (app = build(prefix)));
    return (await app).fetch(request, env);
  }, (env) => env.mountPrefix ?? "/");
}

export interface SessionsMount {
  handler: FetchHandler;
  /** Ends the live sandboxes and closes the store, if the service was ever started. */
  close(): Promise<void>;
}

export function sessionsMountable(runtime: HostRuntime, host: SessionsHost, logger?: Logger): SessionsMount {
  let started: Promise<{ fetch: FetchHandler; close(): Promise<void> }> | undefined;
  const start = async () => {
    const [{ createSessionService }, { sandboxHostEnv }] = await Promise.all([import("../sessions/app.ts"), import("../sessions/domain/modules.ts")]);
    const store = await openSqlStore(runtime, runtime.env.ROUTES_SESSIONS_DB || ":memory:");
    let lost: (ids: string[], reason: string) => void = () => {};
    const live = host.threadRuntimes({ threads: 1, hostEnv: sandboxHostEnv(runtime.env), onLost: (ids, reason) => lost(ids, reason) });
    const service = createSessionService({ store, live, worktrees: host.files, libraries: { tree: host.files, root: runtime.resolvePath(runtime.cwd(), "libraries") }, logger, accessLog: false, ui: await webUi(host), memory: () => runtime.memoryUsage() });
    lost = service.runtimesLost;
    await service.ready;
    return {
      fetch: (request: Request, env: Parameters<FetchHandler>[1]) => service.app.fetch(request, env),
      close: async () => {
        await service.shutdown();
        await store.close();
      },
    };
  };
  return {
    handler: async (request, env) => (await (started ??= start())).fetch(request, env),
    close: async () => {
      if (started) await (await started).close();
    },
  };
}
