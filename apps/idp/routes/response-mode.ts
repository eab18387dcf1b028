/**
 * How an authorization response (a code, or an error once the redirect URI is validated) goes
 * back to the client: `query` (the default for response_type=code), `fragment`, or `form_post`
 * (a page that posts the fields to the redirect URI). Anything else is refused with
 * `unsupported_response_mode`, in the query.
 */
import type { Context } from "hono";
import { formPostPage } from "../pages/form-post.ts";
import { NO_STORE, redirectWith } from "./http.ts";

export const RESPONSE_MODES = ["query", "fragment", "form_post"] as const;
export type ResponseMode = (typeof RESPONSE_MODES)[number];

export const isResponseMode = (value: string): value is ResponseMode => (RESPONSE_MODES as readonly string[]).includes(value);

/**
 * Who may frame the form_post page: the client's own origin only. A silent `prompt=none` request
 * in the client's hidden iframe gets this page there; any other site framing it is refused, as
 * every other page of the provider is (PAGE_HEADERS). X-Frame-Options cannot name an origin, and
 * browsers that know CSP ignore it beside `frame-ancestors`, so it is left out here.
 */
function formPostFraming(redirectUri: string): Record<string, string> {
  const url = new URL(redirectUri);
  const ancestor = url.protocol === "http:" || url.protocol === "https:" ? url.origin : "'none'";
  return { "Content-Security-Policy": `frame-ancestors ${ancestor}`, "Referrer-Policy": "strict-origin" };
}

export function authorizationResponse(
  c: Context,
  redirectUri: string,
  mode: ResponseMode,
  params: Record<string, string | undefined>,
): Response | Promise<Response> {
  if (mode === "query") return redirectWith(c, redirectUri, params);
  const fields = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (mode === "form_post") return c.html(formPostPage(redirectUri, fields), 200, { ...NO_STORE, ...formPostFraming(redirectUri) });
  const url = new URL(redirectUri);
  url.hash = new URLSearchParams(fields).toString();
  return c.body(null, 302, { Location: url.toString(), ...NO_STORE });
}
