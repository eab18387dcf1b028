/**
 * Mountables the command line installs, so one script can serve the other products behind its
 * own origin:
 * - `app.mount("/idp", require("idp").handler())` serves the identity provider in this process,
 *   its issuer `<origin>/idp` (the mount's prefix, whether or not it is stripped);
 * - `require("sessions").handler()` serves the session service's API (and its web UI when
 *   built): `embeddedSessionService` (apps/sessions/embed.ts).
 */
import { isLoopbackAddress } from "#lib/http";
import type { Logger } from "#lib/log";
import type { FetchHandler } from "#lib/runtime";
import { errorResponse } from "../core/reply.ts";
import { withoutIssuerAlias } from "./issuer-alias.ts";

interface IdpMountOptions {
  logger?: Logger;
  /** IdP options from the environment (IDP_USERS, IDP_CLIENT_ID, ...), as the IdP reads them. */
  env?: Record<string, string | undefined>;
}

/** The identity provider as a handler, built on first use for the prefix it is mounted at. */
export function idpMountable(options: IdpMountOptions = {}): FetchHandler {
  const apps = new Map<string, Promise<FetchHandler>>();
  // Loaded on first use: a host whose script mounts no provider never loads its code.
  const build = async (prefix: string) => {
    const { embeddedIdp } = await import("../../idp/embed.ts");
    return embeddedIdp({ env: options.env, issuer: `{origin}${prefix === "/" ? "" : prefix}`, logger: options.logger });
  };
  // Its issuer is `<origin><prefix>`: the issuer's path is the mount's prefix.
  return withoutIssuerAlias(async (request, env) => {
    const prefix = env.mountPrefix ?? "/";
    let app = apps.get(prefix);
    if (!app) apps.set(prefix, app = build(prefix));
    return (await app)(request, env);
  }, (env) => env.mountPrefix ?? "/");
}

/**
 * The session service mounted in this process runs code for whoever reaches it. Its own daemon
 * will not listen beyond loopback without an access token, and a mount has none (the host's
 * sign-in is no guard where its provider lets anyone sign in as anyone): so a caller that is not
 * on this machine is refused at the mount, whatever address the host listens on. The address is
 * the socket's, or the trusted proxy's account of it (`--trusted-proxy`).
 */
export function loopbackCallersOnly(handler: FetchHandler): FetchHandler {
  return (request, env) =>
    isLoopbackAddress(env.clientAddress) ? handler(request, env) : errorResponse(
      403,
      "FORBIDDEN",
      "the mounted session service answers callers on this machine only; for others, run the session service itself with --auth-token",
    );
}
