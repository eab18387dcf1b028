/**
 * The identity provider inside another host (the route host's `require("idp").handler()`): the
 * public factory other apps use instead of this app's internals.
 */
import type { Logger } from "#lib/log";
import type { FetchHandler } from "#lib/runtime";

export interface EmbeddedIdpOptions {
  /** Settings as the provider reads them from its environment (IDP_USERS, IDP_CLIENT_ID, ...). */
  env?: Record<string, string | undefined>;
  /** The issuer, `{origin}` standing for the request's origin (`{origin}/idp`). */
  issuer: string;
  logger?: Logger;
}

/** The provider as a fetch handler, with no access log of its own (its host logs every request). */
export async function embeddedIdp(options: EmbeddedIdpOptions): Promise<FetchHandler> {
  // Loaded on first use: a host that never builds a provider never pays for it.
  const [{ createApp }, { optionsFromEnv }] = await Promise.all([import("./app.ts"), import("./env-options.ts")]);
  const fromEnv = await optionsFromEnv(options.env ?? {});
  const app = createApp({ ...fromEnv, issuer: options.issuer, logger: options.logger, accessLog: false });
  return (request, env) => app.fetch(request, env);
}
