/**
 * Clickjacking: another site shows a service's page in an invisible frame and has the user click
 * its buttons (approve a device, reset the debug state, run a session). Every HTML page the
 * services make themselves says it may not be framed, in both spellings browsers know. A route
 * script's own pages are the script's business and keep what it sends.
 */
import { withEditedHeaders } from "./headers.ts";

export const FRAME_DENY = { "Content-Security-Policy": "frame-ancestors 'none'", "X-Frame-Options": "DENY" } as const;

/** `FRAME_DENY` on a response that is an HTML page; any other response as it is. */
export function unframeable(response: Response): Response {
  if (!(response.headers.get("content-type") ?? "").startsWith("text/html")) return response;
  return withEditedHeaders(response, (h) => {
    // A policy the page has already keeps its other directives.
    const csp = h.get("content-security-policy");
    if (!csp) h.set("content-security-policy", FRAME_DENY["Content-Security-Policy"]);
    else if (!/(^|;)\s*frame-ancestors\s/i.test(csp)) h.set("content-security-policy", `${csp}; ${FRAME_DENY["Content-Security-Policy"]}`);
    h.set("x-frame-options", "DENY");
  });
}
