/**
 * What the provider says when an authorization request names a client or a redirect URI it does
 * not know: each refusal says what to change, since the person reading it is setting up an app.
 */
import type { Client } from "./clients.ts";
import type { RegistrationPolicy } from "./registration.ts";

/** Where the rules are written down (the repository's docs). */
const CLIENTS_DOCS = "docs/idp.md#clients";

/** `client "x" is not registered`, and how to register it: at start, or at /register while it runs. */
export function unknownClientMessage(clientId: string, registration: { policy: RegistrationPolicy; endpoint: string } | undefined): string {
  const atStart = `register it when the provider starts: --client-id ${clientId} --redirect-uris <your app's callback URL> ` +
    `(or IDP_CLIENT_ID and IDP_REDIRECT_URIS, or a clients file: docs/idp-config.md)`;
  const dynamic = registration === undefined || registration.policy === "off"
    ? ""
    : `; or, while it runs, POST {"redirect_uris": ["<your callback>"]} to ${registration.endpoint} (dynamic registration, RFC 7591${
      registration.policy === "token" ? ", with the initial access token as Authorization: Bearer" : ""
    }), which answers with a new client_id`;
  return `client "${clientId}" is not registered: ${atStart}${dynamic}. Or use a built-in client: dev-client, public-spa or web-app (${CLIENTS_DOCS})`;
}

/** `redirect_uri is not registered for client "x"`, with the client's URIs and the loopback rule. */
export function unregisteredRedirectMessage(client: Client, redirectUri: string): string {
  const registered = [...client.redirect_uris, ...(client.redirect_uri_patterns ?? []).map((p) => p.pattern)];
  const shown = registered.length === 0 ? "none" : registered.slice(0, 12).join(", ") + (registered.length > 12 ? `, and ${registered.length - 12} more` : "");
  return `redirect_uri ${JSON.stringify(redirectUri)} is not registered for client "${client.client_id}". Registered: ${shown}. ` +
    `Redirect URIs match exactly, except that one on 127.0.0.1 or [::1] also admits any port (RFC 8252), so http://127.0.0.1:<any port>/same/path works; ` +
    `localhost is a name and must match with its port. Add yours with --redirect-uris (IDP_REDIRECT_URIS) (${CLIENTS_DOCS})`;
}
