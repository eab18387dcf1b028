/**
 * Pushed authorization requests (RFC 9126): what is kept of a pushed request (kind
 * `pushed_request`, per issuer) and the `request_uri` that names it. HTTP: routes/par.ts, and
 * routes/authorize.ts where a request_uri is used.
 */

/** RFC 9126 §2.2: the URN form of a request_uri. */
const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";
/** How long a pushed request waits for its first use at /authorize (RFC 9126 §2.2: short-lived). */
export const PUSHED_REQUEST_LIFETIME_S = 60;
/** Once used, how long the login page may take before the request is spent or gone. */
export const OPENED_REQUEST_LIFETIME_MS = 30 * 60_000;
/**
 * The most a pushed request keeps (its parameters' names and values, in characters): about what an
 * authorization request's URL carries. Any page can make a browser push for a public client, so
 * this times the store's ceiling of pushed requests (MAX_LIVE) bounds their memory (~160 MiB).
 */
export const MAX_PUSHED_REQUEST_CHARS = 16 * 1024;

/** The size a pushed request's parameters count for against MAX_PUSHED_REQUEST_CHARS. */
export const pushedRequestChars = (params: Iterable<[string, string]>): number => {
  let total = 0;
  for (const [name, value] of params) total += name.length + value.length;
  return total;
};

export interface PushedRequestRecord {
  /** The client that pushed it: only that client may use it (RFC 9126 §4). */
  client_id: string;
  /** The parameters as resolved and validated at the push. */
  params: [string, string][];
  /** Provider-clock ms. */
  expires_at: number;
  /**
   * Used once at /authorize, for the login page: only its login form may use it then (until
   * OPENED_REQUEST_LIFETIME_MS), and the code it leads to spends it.
   */
  opened?: true;
}

export const requestUriOf = (key: string) => REQUEST_URI_PREFIX + key;

/** The record key in a request_uri this provider issued, or undefined. */
export const requestUriKey = (
  uri: string,
): string | undefined => (uri.startsWith(REQUEST_URI_PREFIX) ? uri.slice(REQUEST_URI_PREFIX.length) || undefined : undefined);
