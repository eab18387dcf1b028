/**
 * The pushed authorization request endpoint (RFC 9126) at `/par`: the client authenticates as at
 * /token, its parameters are resolved and validated by the code /authorize uses (a refusal is
 * OAuth JSON here, not a redirect), and it gets a short-lived, single-use request_uri bound to it.
 */
import type { Context, Hono } from "hono";
import { AuthorizeRedirectError, OAuthError, PageError } from "../domain/errors.ts";
import { MAX_PUSHED_REQUEST_CHARS, PUSHED_REQUEST_LIFETIME_S, pushedRequestChars, type PushedRequestRecord, requestUriOf } from "../domain/par.ts";
import type { Provider } from "../domain/provider.ts";
import { AUTHORIZE_PARAMS, resolveRequestParams, validateClient, validateRest } from "./authorize.ts";
import { NO_STORE, type Params, readOAuthForm } from "./http.ts";
import { authenticate } from "./token.ts";

/** Client authentication parameters: not part of the authorization request. */
const CLIENT_AUTH_PARAMS = ["client_secret", "client_assertion", "client_assertion_type"];

/** The authorization request's refusal as the endpoint's JSON error (RFC 9126 §2.3). */
function refusal(c: Context, err: unknown): Response {
  if (err instanceof AuthorizeRedirectError) return c.json({ error: err.error, error_description: err.description }, 400, NO_STORE);
  if (err instanceof PageError) return c.json({ error: "invalid_request", error_description: err.message }, 400, NO_STORE);
  throw err;
}

export function registerPar(app: Hono, p: Provider): void {
  app.post("/par", async (c) => {
    const form = await readOAuthForm(c);
    const client = await authenticate(c, p, form);
    if (form.values.has("request_uri")) throw new OAuthError("invalid_request", "request_uri must not be pushed (RFC 9126 §2.1)");
    const values = new Map(form.values);
    for (const name of CLIENT_AUTH_PARAMS) values.delete(name);
    values.set("client_id", client.client_id);
    let params: Params;
    try {
      params = await resolveRequestParams(p, { values, duplicates: [] }, c.req.url);
      validateRest(params, await validateClient(p, params));
    } catch (err) {
      return refusal(c, err);
    }
    // A request object naming another client is caught by validation; this is the binding's guard.
    if (params.values.get("client_id") !== client.client_id) throw new OAuthError("invalid_request", "client_id differs from the authenticated client");
    // Only what /authorize reads is kept, as strings of their own: a value read from a form is a
    // slice of its body (V8's sliced strings), and would keep a 1 MiB body alive in the store.
    const kept = [...params.values].filter(([name]) => (AUTHORIZE_PARAMS as readonly string[]).includes(name));
    if (pushedRequestChars(kept) > MAX_PUSHED_REQUEST_CHARS) {
      throw new OAuthError("invalid_request", `the pushed request's parameters exceed ${MAX_PUSHED_REQUEST_CHARS} characters`);
    }
    const key = p.secret();
    const record: PushedRequestRecord = { client_id: client.client_id, params: structuredClone(kept), expires_at: p.now() + PUSHED_REQUEST_LIFETIME_S * 1000 };
    await p.put("pushed_request", key, record, { pruneAt: record.expires_at });
    return c.json({ request_uri: requestUriOf(key), expires_in: PUSHED_REQUEST_LIFETIME_S }, 201, NO_STORE);
  });
}
