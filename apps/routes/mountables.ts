/**
 * Mountables the command line installs, so one script can serve the other products behind its
 * own origin: `app.mount("/idp", require("idp").handler())` serves the identity provider in this
 * process, its issuer `<origin>/idp` (the mount's prefix, whether or not it is stripped).
 */
import type { Logger } from "../../lib/log.ts";
import type { FetchHandler } from "../../lib/runtime.ts";

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
    const app = createApp({ ...fromEnv, issuer: `{origin}${prefix === "/" ? "" : prefix}`, logger: options.logger });
    return { fetch: (request: Request, env: Parameters<FetchHandler>[1]) => app.fetch(request, env) };
  };
  return async (request, env) => {
    const prefix = env.mountPrefix ?? "/";
    let app = apps.get(prefix);
    if (!app) apps.set(prefix, (app = build(prefix)));
    return (await app).fetch(request, env);
  };
}
