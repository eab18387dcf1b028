/** Token introspection (RFC 7662) and revocation (RFC 7009), with the /token client authentication. */
import type { Hono } from "hono";
import { OAuthError } from "../domain/errors.ts";
import { revokeGrant } from "../domain/issue.ts";
import type { Provider } from "../domain/provider.ts";
import type { AccessTokenRecord, RefreshTokenRecord } from "../domain/records.ts";
import { NO_STORE, readOAuthForm } from "./http.ts";
import type { ExchangedTokenRecord } from "./token-exchange.ts";
import { authenticate } from "./token.ts";

type Found =
  | { kind: "access_token"; record: AccessTokenRecord }
  | { kind: "refresh_token"; record: RefreshTokenRecord };

/** A live token of the calling client; other clients' tokens are not theirs to inspect. */
async function find(p: Provider, token: string, clientId: string): Promise<Found | undefined> {
  const now = p.now();
  const access = await p.state.get<AccessTokenRecord>("access_token", token);
  if (access && access.expires_at > now && access.client_id === clientId) return { kind: "access_token", record: access };
  const refresh = await p.state.get<RefreshTokenRecord>("refresh_token", token);
  if (refresh && refresh.expires_at > now && refresh.client_id === clientId) return { kind: "refresh_token", record: refresh };
  return undefined;
}

export function registerIntrospection(app: Hono, p: Provider): void {
  app.post("/introspect", async (c) => {
    const form = await readOAuthForm(c);
    const client = await authenticate(c, p, form);
    const token = form.values.get("token");
    if (token === undefined) throw new OAuthError("invalid_request", "token is required");
    const found = await find(p, token, client.client_id);
    if (!found) return c.json({ active: false }, 200, NO_STORE);
    const r = found.record;
    const body: Record<string, unknown> = {
      active: true,
      scope: r.scope,
      client_id: r.client_id,
      sub: r.sub,
      iss: p.issuerFor(c.req.url),
      iat: Math.floor(r.issued_at / 1000),
      exp: Math.floor(r.expires_at / 1000),
      token_type: found.kind === "refresh_token" ? "refresh_token" : r.jkt ? "DPoP" : "Bearer",
    };
    if ("login" in r && r.login !== undefined) body.username = r.login;
    if (r.jkt) body.cnf = { jkt: r.jkt };
    // An exchanged token (RFC 8693): its audience and who acts.
    const exchanged = r as ExchangedTokenRecord;
    if (exchanged.aud) body.aud = exchanged.aud.length === 1 ? exchanged.aud[0] : exchanged.aud;
    if (exchanged.act) body.act = exchanged.act;
    return c.json(body, 200, NO_STORE);
  });

  app.post("/revoke", async (c) => {
    const form = await readOAuthForm(c);
    const client = await authenticate(c, p, form);
    const token = form.values.get("token");
    if (token === undefined) throw new OAuthError("invalid_request", "token is required");
    const found = await find(p, token, client.client_id);
    if (found?.kind === "access_token") await p.state.delete("access_token", token);
    // Revoking a refresh token also ends the access tokens of its grant (RFC 7009 §2.1).
    if (found?.kind === "refresh_token") await revokeGrant(p, found.record.grant_id);
    return c.body(null, 200, NO_STORE);
  });
}
