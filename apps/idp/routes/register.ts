/**
 * Dynamic client registration (RFC 7591) at `/register` and its management API (RFC 7592) at
 * `/register/{client_id}`: GET reads, PUT replaces the metadata, DELETE removes the client, each
 * with the registration access token as a Bearer token. The policy (open, token, off) is the
 * provider's (Provider.registrationPolicy); the rules are in domain/registration.ts.
 */
import type { Context, Hono } from "hono";
import { OAuthError } from "../domain/errors.ts";
import type { Provider } from "../domain/provider.ts";
import { constantTimeEqual, opaqueSecret } from "../domain/random.ts";
import {
  checkUpdateBody,
  clientInformation,
  hashRegistrationToken,
  needsSecret,
  type RegisteredClientRecord,
  registrationTokenMatches,
  validateRegistration,
} from "../domain/registration.ts";
import { GRANT_TYPES } from "./discovery.ts";
import { NO_STORE, readBodyText } from "./http.ts";

/** RFC 6750 §3: a refused Bearer token names itself in the challenge. */
const invalidToken = (description: string) =>
  new OAuthError("invalid_token", description, 401, { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${description}"` });

function bearer(c: Context): string | undefined {
  const m = /^bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
  return m?.[1];
}

/** The JSON body of a registration request (RFC 7591 §3.1: application/json). */
async function readMetadata(c: Context): Promise<unknown> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    throw new OAuthError("invalid_request", "the body must be application/json client metadata");
  }
  try {
    return JSON.parse(await readBodyText(c));
  } catch (err) {
    if (err instanceof SyntaxError) throw new OAuthError("invalid_client_metadata", "the body is not valid JSON");
    throw err;
  }
}

const clientUri = (c: Context, p: Provider, clientId: string) => `${p.issuerFor(c.req.url)}/register/${encodeURIComponent(clientId)}`;

/** The registered client the request's Bearer token manages, or 401 invalid_token (RFC 7592 §2). */
async function managedClient(c: Context, p: Provider): Promise<{ record: RegisteredClientRecord; token: string }> {
  const token = bearer(c);
  if (token === undefined) throw invalidToken("the registration access token is required (Authorization: Bearer)");
  const record = await p.state.get<RegisteredClientRecord>("client", c.req.param("client_id")!);
  // An unknown client and a wrong token look the same (RFC 7592 §2.1).
  if (!record || !(await registrationTokenMatches(record, token))) throw invalidToken("unknown client or wrong registration access token");
  return { record, token };
}

/** The secret a client with this metadata has: kept while it needs one, issued when it starts to. */
function secretFor(p: Provider, metadata: RegisteredClientRecord["metadata"], current: string | undefined): string | undefined {
  if (!needsSecret(metadata)) return undefined;
  return current ?? p.secret();
}

export function registerRegistration(app: Hono, p: Provider): void {
  app.post("/register", async (c) => {
    const policy = p.registrationPolicy(c.req.url);
    if (policy === "off") throw new OAuthError("access_denied", "dynamic client registration is off (--registration, IDP_REGISTRATION)", 403);
    const initial = p.options.registrationToken;
    const presented = bearer(c);
    const withInitialToken = initial !== undefined && presented !== undefined && constantTimeEqual(presented, initial);
    if (policy === "token" && !withInitialToken) {
      throw invalidToken(presented === undefined ? "registration needs the initial access token (Authorization: Bearer)" : "wrong initial access token");
    }
    const metadata = validateRegistration(await readMetadata(c), { grantTypes: GRANT_TYPES, trusted: withInitialToken });
    const token = p.secret();
    const record: RegisteredClientRecord = {
      client_id: opaqueSecret(p.random, 16),
      client_id_issued_at: Math.floor(p.now() / 1000),
      registration_token_hash: await hashRegistrationToken(token),
      metadata,
    };
    if (withInitialToken) record.trusted = true;
    const secret = secretFor(p, metadata, undefined);
    if (secret !== undefined) record.client_secret = secret;
    // 128 random bits: a clash with a live id is not expected, but `add` never overwrites one.
    if (p.clients.has(record.client_id) || !(await p.add("client", record.client_id, record))) {
      throw new OAuthError("server_error", "client id clash; register again", 500);
    }
    p.logger.info("client registered", { client_id: record.client_id, client_name: metadata.client_name });
    return c.json(clientInformation(record, { token, uri: clientUri(c, p, record.client_id) }), 201, NO_STORE);
  });

  app.get("/register/:client_id", async (c) => {
    const { record, token } = await managedClient(c, p);
    return c.json(clientInformation(record, { token, uri: clientUri(c, p, record.client_id) }), 200, NO_STORE);
  });

  app.put("/register/:client_id", async (c) => {
    const { record, token } = await managedClient(c, p);
    const body = await readMetadata(c);
    checkUpdateBody(body, record.client_id, record.client_secret);
    const metadata = validateRegistration(body, { grantTypes: GRANT_TYPES, trusted: record.trusted === true });
    const next: RegisteredClientRecord = { ...record, metadata };
    const secret = secretFor(p, metadata, record.client_secret);
    if (secret !== undefined) next.client_secret = secret;
    else delete next.client_secret;
    // Only over what was read: a concurrent update or delete wins, this one is refused.
    if (!(await p.state.swap("client", record.client_id, record, next))) throw invalidToken("the client changed or was deleted meanwhile; read it again");
    return c.json(clientInformation(next, { token, uri: clientUri(c, p, record.client_id) }), 200, NO_STORE);
  });

  app.delete("/register/:client_id", async (c) => {
    const { record } = await managedClient(c, p);
    await p.state.take("client", record.client_id, record);
    p.logger.info("client deleted", { client_id: record.client_id });
    return c.body(null, 204, NO_STORE);
  });
}
