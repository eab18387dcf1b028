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

export function authorizationResponse(
  c: Context,
  redirectUri: string,
  mode: ResponseMode,
  params: Record<string, string | undefined>,
): Response | Promise<Response> {
  if (mode === "query") return redirectWith(c, redirectUri, params);
  const fields = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (mode === "form_post") return c.html(formPostPage(redirectUri, fields), 200, NO_STORE);
  const url = new URL(redirectUri);
  url.hash = new URLSearchParams(fields).toString();
  return c.body(null, 302, { Location: url.toString(), ...NO_STORE });
}
