/**
 * Requests another site started. A page anywhere can make a browser send a form or a `no-cors`
 * fetch to a local daemon (it cannot read the answer, but the POST is acted on), and DNS
 * rebinding aside, the Host check does not see it: the Host is the daemon's own. What the browser
 * does say is where the request comes from: `Sec-Fetch-Site` (same-origin, same-site, cross-site,
 * none) and `Origin` on every unsafe request. A request saying it came from another origin is
 * refused; a client that sends neither (curl, an SDK, a test) is no browser acting for someone
 * else, and passes.
 */

/** Whether a request may change state (anything but GET, HEAD, OPTIONS). */
export const isUnsafeMethod = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS";

/**
 * Whether the browser says this request came from another origin than its own: `Sec-Fetch-Site`
 * other than `same-origin` or `none`, or an `Origin` that is neither the request's own nor one of
 * `allowedOrigins` (a service's configured CORS origins).
 */
export function crossSite(request: Request, allowedOrigins?: ReadonlySet<string>): boolean {
  const site = request.headers.get("sec-fetch-site");
  const origin = request.headers.get("origin");
  if (origin !== null && allowedOrigins?.has(origin)) return false;
  if (site !== null && site !== "same-origin" && site !== "none") return true;
  return origin !== null && origin !== new URL(request.url).origin;
}
