/**
 * Mountables the command line installs, so one script can serve the other products behind its
 * own origin:
 * - `app.mount("/idp", require("idp").handler())` serves the identity provider in this process,
 *   its issuer `<origin>/idp` (the mount's prefix, whether or not it is stripped);
 * - `require("sessions").handler()` serves the session service's API (and its web UI when
 *   built): `embeddedSessionService` (apps/sessions/embed.ts).
 */
import type { Logger } from "#lib/log";
import type { FetchHandler } from "#lib/runtime";
import { embeddedIdp } from "../../idp/embed.ts";
import { withoutIssuerAlias } from "./issuer-alias.ts";

export interface IdpMountOptions {
  logger?: Logger;
  /** IdP options from the environment (IDP_USERS, IDP_CLIENT_ID, ...), as the IdP reads them. */
  env?: Record<string, string | undefined>;
}

/** The identity provider as a handler, built on first use for the prefix it is mounted at. */
export function idpMountable(options: IdpMountOptions = {}): FetchHandler {
  const apps = new Map<string, Promise<FetchHandler>>();
  const build = (prefix: string) => embeddedIdp({ env: options.env, issuer: `{origin}${prefix === "/" ? "" : prefix}`, logger: options.logger });
  // Its issuer is `<origin><prefix>`: the issuer's path is the mount's prefix.
  return withoutIssuerAlias(async (request, env) => {
    const prefix = env.mountPrefix ?? "/";
    let app = apps.get(prefix);
    if (!app) apps.set(prefix, app = build(prefix));
    return (await app)(request, env);
  }, (env) => env.mountPrefix ?? "/");
}
