/**
 * The provider for edge hosts: `export default { fetch }`, configured from environment variables
 * alone, with its state in a libSQL database (Turso), so every isolate that serves a request is
 * the same provider. Runs unchanged under `deno serve` (Deno Deploy, Netlify edge functions), on
 * Vercel's edge runtime and as a module Worker without Durable Objects.
 *
 *   IDP_STATE             libsql://<db>.turso.io (or https://...) for an edge host;
 *                         file:./data/idp.db under `deno serve` on one machine; unset: memory
 *                         (each isolate its own provider: only for a single long-lived process)
 *   IDP_STATE_AUTH_TOKEN  the database's auth token
 *   IDP_ISSUER, IDP_ALLOWED_HOSTS (names answered beyond loopback, localhost and the issuer's host), IDP_CLIENT_ID, IDP_CLIENT_SECRET, IDP_REDIRECT_URIS, IDP_USERS, IDP_SIGNING_KEYS,
 *   IDP_ACCESS_TOKEN_FORMAT, ... as for serve-dev (env-options.ts); LOG_LEVEL
 *
 * The first request of an isolate applies the migrations (once per database) and loads the keys
 * (generated and stored by the first isolate ever, read by the others); docs/idp.md has the costs.
 */
import type { Hono } from "hono";
import { groupCommit, type SqlStore } from "#lib/db";
import { isRemoteLibsqlUrl, libsqlStore } from "#lib/db/libsql";
import { type HostAllowlist, hostAllowlist, misdirectedAnswer, parseAllowedHosts } from "#lib/http";
import { createLogger } from "#lib/log";
import { createIdp } from "../app.ts";
import { type Env, optionsFromEnv } from "../env-options.ts";
import { oauthMisdirected } from "../routes/http.ts";
import { openStateStore } from "../state/sql.ts";
import type { IdpStateStore } from "../state/store.ts";

/** Deno's `deno serve` passes connection info; a Worker passes its env (vars) instead. */
interface ServeInfo {
  remoteAddr: { hostname: string };
}

const isServeInfo = (value: unknown): value is ServeInfo => typeof (value as ServeInfo | undefined)?.remoteAddr?.hostname === "string";

/** The variables: a Worker's env, else the process environment of Deno, Vercel or Node. */
function environment(workerEnv: unknown): Env {
  if (workerEnv && typeof workerEnv === "object" && !isServeInfo(workerEnv)) {
    return Object.fromEntries(Object.entries(workerEnv).filter(([, v]) => typeof v === "string")) as Env;
  }
  const g = globalThis as { Deno?: { env: { toObject(): Env } }; process?: { env: Env } };
  return g.Deno?.env.toObject() ?? g.process?.env ?? {};
}

const onWorkers = () => (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === "Cloudflare-Workers";

async function openState(env: Env): Promise<IdpStateStore | undefined> {
  const url = env.IDP_STATE?.trim();
  if (!url || url === "memory") return undefined;
  const authToken = env.IDP_STATE_AUTH_TOKEN?.trim() || undefined;
  let open: () => Promise<SqlStore>;
  if (isRemoteLibsqlUrl(url)) {
    // The HTTP client: no native code, runs on every edge runtime. Writes of one turn share a
    // batch (one round trip for many requests), except on Workers: there a request may not wait
    // for I/O that another request started (it would hang), so each request writes for itself.
    const { createClient } = await import("@libsql/client/web");
    const store = () => libsqlStore(createClient({ url, authToken }));
    open = async () => (onWorkers() ? store() : groupCommit(store()));
  } else {
    // An embedded file (`deno serve` on one machine): the native libsql package, and the file's
    // folder created with node:fs (Deno has it too). Imported by computed names so that a bundler
    // for an edge host leaves them out.
    const [embedded, fs] = ["../../../lib/db/open.ts", "node:fs/promises"];
    const { openSqlStore } = (await import(/* @vite-ignore */ embedded)) as typeof import("#lib/db/open");
    const { mkdir } = (await import(/* @vite-ignore */ fs)) as typeof import("node:fs/promises");
    const folders = { ensureDir: async (path: string) => void (await mkdir(path, { recursive: true })), resolvePath: (...parts: string[]) => parts.join("/") };
    open = () => openSqlStore(folders, url, authToken);
  }
  return openStateStore(open, { shared: true });
}

let built: Promise<{ app: Hono; hosts: HostAllowlist }> | undefined;

async function build(env: Env): Promise<{ app: Hono; hosts: HostAllowlist }> {
  const logger = createLogger({ fields: { service: "idp" }, level: (env.LOG_LEVEL as never) ?? "info" });
  const options = await optionsFromEnv(env);
  const state = await openState(env);
  if (!state) logger.warn("IDP_STATE is not set: state in memory, this isolate's own");
  // Keys are loaded before the first answer, not in the background: an edge runtime may end
  // work that a finished request left running.
  // On Workers a request's unfinished work may be cut off: back-channel logout POSTs are awaited.
  // The names it answers (DNS rebinding): IDP_ISSUER's host and IDP_ALLOWED_HOSTS; a deployment
  // under its platform's hostname names it in one of them.
  const hosts = hostAllowlist({ urls: [options.issuer], hosts: parseAllowedHosts(env.IDP_ALLOWED_HOSTS) });
  return { app: (await createIdp({ ...options, issuer: options.issuer ?? "{origin}", state, logger, awaitDeliveries: onWorkers() })).app, hosts };
}

export default {
  async fetch(request: Request, second?: unknown): Promise<Response> {
    let app: Hono;
    let hosts: HostAllowlist;
    try {
      ({ app, hosts } = await (built ??= build(environment(second))));
    } catch (err) {
      built = undefined; // a database that was unreachable may answer the next request
      const message = (err as Error).message;
      return Response.json({ error: "server_error", error_description: `identity provider not started: ${message}` }, { status: 500 });
    }
    // The caller's address, where the runtime tells it (deno serve): /debug/* serves loopback only.
    // On Workers the platform sets CF-Connecting-IP (a client cannot); on any other host that
    // header is whatever the caller sent, so the address is unknown (never loopback) there.
    const misdirected = misdirectedAnswer(hosts, request, oauthMisdirected);
    if (misdirected) return misdirected;
    return app.fetch(request, { clientAddress: isServeInfo(second) ? second.remoteAddr.hostname : onWorkers() ? undefined : "" });
  },
};
