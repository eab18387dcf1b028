/**
 * workerd entry. Every request goes to one Durable Object, which holds the provider's state, so
 * a flow that spans isolates (authorize in one, token in another) sees the same codes and sessions.
 * The state lives in the object's SQLite storage (the SQL state store over it), so it also
 * survives the object being evicted or restarted. (For hosts without Durable Objects: edge.ts.) Settings come from wrangler vars through `optionsFromEnv`; without
 * IDP_ISSUER the issuer is the request's origin.
 */
import { DurableObject } from "cloudflare:workers";
import type { Hono } from "hono";
import { type HostAllowlist, hostAllowlist, misdirectedAnswer, parseAllowedHosts } from "#lib/http";
import { createLogger } from "#lib/log";
import { loadApp } from "../app.ts";
import { optionsFromEnv } from "../env-options.ts";
import { durableObjectStore } from "#lib/db/durable";
import { sqlStateStore } from "../state/sql.ts";
import { oauthMisdirected } from "../routes/http.ts";
import { firstRequestBanner } from "#lib/worker-banner";

export interface IdpWorkerEnv {
  IDP: DurableObjectNamespace<IdpObject>;
  LOG_LEVEL?: string;
  /** "off": no access log line (wrangler dev logs each request itself). */
  ACCESS_LOG?: string;
  [name: string]: unknown;
}

export class IdpObject extends DurableObject<IdpWorkerEnv> {
  /** Built on the first request: the app, or the configuration error every request then reports. */
  private built?: Promise<{ app: Hono } | { error: string }>;

  private async build(): Promise<{ app: Hono } | { error: string }> {
    const logger = createLogger({ fields: { service: "idp" }, level: (this.env.LOG_LEVEL as never) ?? "info" });
    try {
      const env = Object.fromEntries(Object.entries(this.env).filter(([, v]) => typeof v === "string")) as Record<string, string>;
      const options = await optionsFromEnv(env);
      // One object serves every request: no other instance shares its storage.
      const state = await sqlStateStore(durableObjectStore(this.ctx.storage), { shared: false });
      return { app: await loadApp({ ...options, issuer: options.issuer ?? "{origin}", state, logger, accessLog: this.env.ACCESS_LOG !== "off" }) };
    } catch (err) {
      // Bad configuration (users document, keys, issuer): say so on every request.
      const error = (err as Error).message;
      logger.error("idp configuration invalid", { error });
      return { error };
    }
  }

  override async fetch(request: Request): Promise<Response> {
    const built = await (this.built ??= this.build());
    if ("error" in built) {
      return Response.json({ error: "server_error", error_description: `configuration error: ${built.error}` }, { status: 500 });
    }
    return built.app.fetch(request, {});
  }
}

/**
 * The provider's requests into its object, without the host check: the route host's Worker calls
 * this for its /idp mount after its own check (a mounted service answers the host's names).
 */
export async function idpObjectFetch(request: Request, env: IdpWorkerEnv): Promise<Response> {
  // The body is buffered before it crosses to the object: a streamed body that a handler never
  // reads (a 403, a form-less POST) otherwise breaks the request with "Can't read from request
  // stream after response has been sent". Bodies here are small forms and JSON.
  const body = request.method === "GET" || request.method === "HEAD" ? null : await request.arrayBuffer();
  const forwarded = new Request(request.url, { method: request.method, headers: request.headers, body, redirect: "manual" });
  return env.IDP.get(env.IDP.idFromName("idp")).fetch(forwarded);
}

/** The names this Worker answers (wrangler dev passes the Host on; a deployment's own hostname
 * comes from IDP_ISSUER or IDP_ALLOWED_HOSTS); built on the first request, vars being fixed. */
let hosts: HostAllowlist | undefined;

/** Where to go, printed at the first request (the Worker learns its origin there). */
const banner = firstRequestBanner("identity provider", (origin) => [
  ["discovery", `${origin}/.well-known/openid-configuration`],
  ["login page", `${origin}/debug/client (signs in with the debug client and shows the tokens)`],
  ["debug page", `${origin}/debug/ui (who is signed in, clients, one-click actions)`],
  ["your app", 'public-spa with a http://127.0.0.1:<any port>/callback redirect URI (docs/idp.md, "Clients")'],
]);

export default {
  fetch(request: Request, env: IdpWorkerEnv): Promise<Response> | Response {
    if (env.LOG_LEVEL !== "silent") banner(request);
    try {
      hosts ??= hostAllowlist({ urls: [env.IDP_ISSUER as string | undefined], hosts: parseAllowedHosts(env.IDP_ALLOWED_HOSTS as string | undefined) });
    } catch (err) {
      return Response.json({ error: "server_error", error_description: `configuration error: ${(err as Error).message}` }, { status: 500 });
    }
    return misdirectedAnswer(hosts, request, oauthMisdirected) ?? idpObjectFetch(request, env);
  },
} satisfies ExportedHandler<IdpWorkerEnv>;
