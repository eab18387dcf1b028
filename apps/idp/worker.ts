/**
 * workerd entry. Every request goes to one Durable Object, which holds the provider's state, so
 * a flow that spans isolates (authorize in one, token in another) sees the same codes and sessions.
 */
import { DurableObject } from "cloudflare:workers";
import { createLogger } from "../../lib/log.ts";
import { createApp } from "./app.ts";

export interface IdpWorkerEnv {
  IDP: DurableObjectNamespace<IdpObject>;
  IDP_ISSUER?: string;
  LOG_LEVEL?: string;
}

export class IdpObject extends DurableObject<IdpWorkerEnv> {
  private app?: ReturnType<typeof createApp>;

  override async fetch(request: Request): Promise<Response> {
    this.app ??= createApp({
      issuer: this.env.IDP_ISSUER ?? new URL(request.url).origin,
      logger: createLogger({ fields: { service: "idp" }, level: (this.env.LOG_LEVEL as never) ?? "info" }),
    });
    return this.app.fetch(request, {});
  }
}

export default {
  fetch(request: Request, env: IdpWorkerEnv): Promise<Response> {
    return env.IDP.get(env.IDP.idFromName("idp")).fetch(request);
  },
} satisfies ExportedHandler<IdpWorkerEnv>;
