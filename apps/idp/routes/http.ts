/** HTTP helpers shared by the provider's routes: form bodies, OAuth error bodies, redirects. */
import { readBoundedBytes } from "#lib/http";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { OAuthError } from "../domain/errors.ts";
import type { Provider } from "../domain/provider.ts";
import type { SessionRecord } from "../domain/records.ts";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;
/** Headers of the provider's own pages (login, device, messages): never cached, never framed, and
 * never naming their URL (with its code, state or hint) in a Referer (RFC 9700 §4.2). `strict-origin`
 * rather than `no-referrer`: under `no-referrer` a browser sends `Origin: null` with the page's own
 * form posts, and the login and device forms refuse a post whose origin is not theirs. */
export const PAGE_HEADERS = {
  "Cache-Control": "no-store",
  "Content-Security-Policy": "frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "strict-origin",
} as const;
/** The configured issuer's session cookie (an issuer by path has its own: Provider.sessionCookie). */

export interface Params {
  values: Map<string, string>;
  /** Names sent more than once (OAuth parameters must not repeat). */
  duplicates: string[];
}

/** Parameters from a query or form; an empty value counts as absent (RFC 6749 §3.1). */
export function toParams(search: URLSearchParams, repeatable: readonly string[] = []): Params {
  const values = new Map<string, string>();
  const duplicates: string[] = [];
  for (const [name, value] of search) {
    if (value === "") continue;
    if (values.has(name) && !repeatable.includes(name)) duplicates.push(name);
    else values.set(name, value);
  }
  return { values, duplicates };
}

const isForm = (c: Context) => /^application\/x-www-form-urlencoded\s*(;|$)/i.test(c.req.header("content-type") ?? "");

/** A form body, or undefined when the request is not `application/x-www-form-urlencoded`. */
/** Largest request body the provider reads (forms, debug JSON): 1 MiB, counted while it streams. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Bodies read, by request: the request log (routes/debug-requests.ts) lists what was sent. */
const bodiesRead = new WeakMap<Request, string>();

/** The body as text, at most MAX_BODY_BYTES (BodyLimitError, answered 413 by the app). */
export async function readBodyText(c: Context): Promise<string> {
  const text = new TextDecoder().decode(await readBoundedBytes(c.req.raw, MAX_BODY_BYTES));
  bodiesRead.set(c.req.raw, text);
  return text;
}

/** The body a handler read with readBodyText, if it read one. */
export const bodyTextRead = (request: Request): string | undefined => bodiesRead.get(request);

export async function readForm(c: Context, repeatable: readonly string[] = []): Promise<Params | undefined> {
  if (!isForm(c)) return undefined;
  return toParams(new URLSearchParams(await readBodyText(c)), repeatable);
}

/** A form body at an OAuth JSON endpoint: anything else is `invalid_request`. */
export async function readOAuthForm(c: Context): Promise<Params> {
  const form = await readForm(c);
  if (!form) throw new OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded");
  if (form.duplicates.length > 0) throw new OAuthError("invalid_request", `parameter repeated: ${form.duplicates.join(", ")}`);
  return form;
}

/**
 * Whether the provider's cookies get `Secure`: the issuer (configured, or `{origin}` made from
 * this request) is https, or the request itself came over https. With the default http issuer on
 * loopback they do not: a browser drops a Secure cookie set over plain http.
 */
export const secureCookies = (c: Context, p: Provider): boolean => p.issuerFor(c.req.url).startsWith("https:") || c.req.url.startsWith("https:");

/** The 421 of a request for a host the provider does not answer (lib/http/host-allowlist.ts), as OAuth errors are. */
export const oauthMisdirected = (message: string) => ({ error: "invalid_request", error_description: message });

export function oauthErrorResponse(c: Context, err: OAuthError): Response {
  return c.json({ error: err.error, error_description: err.description }, err.status, { ...NO_STORE, ...err.headers });
}

/** `target` with extra query parameters (kept after any the URI already has). */
export function withQuery(target: string, params: Record<string, string | undefined>): string {
  const url = new URL(target);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}

/** 302 to `target` with extra query parameters (kept after any the URI already has). */
export function redirectWith(c: Context, target: string, params: Record<string, string | undefined>): Response {
  return c.body(null, 302, { Location: withQuery(target, params), ...NO_STORE });
}

/** The live IdP session named by the request's cookie, if any. */
export async function currentSession(c: Context, p: Provider): Promise<{ id: string; session: SessionRecord } | undefined> {
  const id = getCookie(c, p.sessionCookie);
  if (!id) return undefined;
  const session = await p.state.get<SessionRecord>("session", id);
  if (!session || session.expires_at <= p.now()) return undefined;
  return { id, session };
}

/** Endpoint URLs advertised for an issuer. */
export function endpoints(issuer: string) {
  return {
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    jwks_uri: `${issuer}/jwks`,
    end_session_endpoint: `${issuer}/end-session`,
    device_authorization_endpoint: `${issuer}/device_authorization`,
    introspection_endpoint: `${issuer}/introspect`,
    revocation_endpoint: `${issuer}/revoke`,
    pushed_authorization_request_endpoint: `${issuer}/par`,
    verification_uri: `${issuer}/device`,
  };
}

/** The path a form on a page should post to: the same route, under the prefix the page came from. */
export const samePath = (c: Context) => new URL(c.req.url).pathname;

export const rfc3339 = (ms: number) => new Date(ms).toISOString();
