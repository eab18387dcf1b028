/**
 * Runtime-free, so the command line's mountable and the Worker's both use it.
 */
import { errorEnvelope } from "#lib/http";
import type { FetchHandler, ServeEnv } from "#lib/runtime";
import { underPrefix } from "../core/plan.ts";

/**
 * A mounted identity provider also answers under its issuer's path (`/idp/debug` and
 * `/debug` alike). Behind a mount that strips its prefix, that alias (`/idp/idp/debug`) is never
 * advertised, and would step around the mount's excludePrefixes: refused.
 */
export function withoutIssuerAlias(handler: FetchHandler, issuerPath: (env: ServeEnv) => string): FetchHandler {
  return (request, env) => {
    const path = issuerPath(env);
    const own = new URL(request.url).pathname;
    if (env.mountStripped && path !== "/" && path !== "" && underPrefix(own, path)) {
      return Response.json(errorEnvelope("NOT_FOUND", `no route for ${request.method} ${own}`), { status: 404 });
    }
    return handler(request, env);
  };
}
