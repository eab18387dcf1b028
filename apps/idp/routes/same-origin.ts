/**
 * The provider's pages change state on a POST: the login form (`/authorize`), device approval
 * (`/device`), end-session, and the debug interface. Another site could make a browser send such
 * a POST (a form that submits itself: a login as the attacker, "login CSRF", or a reset of the
 * debug state); the loopback guard does not help, since the browser is on the loopback.
 *
 * So such a POST that the browser says came from another origin is refused: `Sec-Fetch-Site` other
 * than `same-origin` or `none`, or an `Origin` that is not this request's. A client that sends
 * neither (curl, a test, a server) is not a browser acting for someone else, and passes.
 */
import type { Context, MiddlewareHandler } from "hono";
import { crossSite, isUnsafeMethod } from "#lib/http";
import { PageError } from "../domain/errors.ts";

/** Whether the browser says this request came from another origin (the session API's rule too). */
export { crossSite };

/** Refuses unsafe requests another origin started, with `refuse(c)`'s answer. */
export function sameOriginOnly(refuse: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  return async (c, next) => {
    if (isUnsafeMethod(c.req.method) && crossSite(c.req.raw)) return refuse(c);
    await next();
  };
}

/** The page a refused form gets. */
export function notFromThisSite(): never {
  throw new PageError(
    403,
    "Not from this site",
    "This form was sent by another web site, so it was not acted on. Open the provider's page and submit it there.",
  );
}
