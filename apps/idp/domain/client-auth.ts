/**
 * Client authentication, one function for every endpoint that takes it (/token, /introspect,
 * /revoke, /device_authorization, pushed authorization requests): a secret (Basic or body), none
 * for a public client (clients.ts), or a client assertion (OIDC Core §9, RFC 7523 §2.2):
 * `private_key_jwt` (signed with a key of the client's `jwks` or `jwks_uri`) and
 * `client_secret_jwt` (HMAC with its secret). Every failure is `invalid_client` (401).
 */
import { CLIENT_ASYMMETRIC_ALGS, CLIENT_SECRET_ALGS, isSecretAlg } from "./algorithms.ts";
import { ForeignJwtError, isUsableJti, MAX_JTI_LENGTH, typMediaType, verifyForeignJwt } from "./client-keys.ts";
import { authenticateClient, authMethodsOf, type Client, type ClientCredentials, invalidClient, readClientCredentials } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import type { Provider } from "./provider.ts";
import { loadJose } from "#lib/oauth";

/** How far ahead an assertion's `exp` may be: assertions are for one request, not to keep. */
export const MAX_ASSERTION_LIFETIME_S = 600;

/**
 * The `typ` a client assertion may carry: none or `JWT` (RFC 7523 names none) and
 * `client-authentication+jwt` (draft-ietf-oauth-rfc7523bis). A JWT typed for another purpose
 * (RFC 8725 §3.11) is refused even when its claims fit: a request object (`oauth-authz-req+jwt`),
 * which passes through the browser, would otherwise sign its client in at /token.
 */
const ASSERTION_TYPES = ["jwt", "client-authentication+jwt"];

interface ClientAuthRequest {
  /** The request's Authorization header. */
  authorization: string | undefined;
  form: Map<string, string>;
  /**
   * What an assertion's `aud` may name: the issuer (current OIDC guidance, RFC 7523bis) and, as
   * RFC 7523 and older clients have it, the endpoint's URL or the token endpoint's.
   */
  audiences: string[];
}

/** The authenticated client of a request, by whichever method it used (see the module comment). */
export async function authenticateRequestClient(p: Provider, request: ClientAuthRequest): Promise<Client> {
  const credentials = readClientCredentials(request.authorization, request.form);
  if (credentials.method !== "jwt") return authenticateClient(await p.clientsNaming(credentials.clientId), credentials);
  return authenticateAssertion(p, credentials, request.audiences);
}

async function authenticateAssertion(p: Provider, credentials: ClientCredentials, audiences: string[]): Promise<Client> {
  const { decodeJwt, decodeProtectedHeader } = await loadJose();
  const assertion = credentials.assertion!;
  let claimedId: unknown;
  let alg: string | undefined;
  let typ: unknown;
  try {
    claimedId = decodeJwt(assertion).sub;
    ({ alg, typ } = decodeProtectedHeader(assertion));
  } catch {
    throw invalidClient("client_assertion is not a JWT");
  }
  if (typ !== undefined && !ASSERTION_TYPES.includes(typMediaType(typ) ?? "")) {
    throw invalidClient(`client_assertion: a JWT of typ "${String(typ).slice(0, 40)}" is not a client assertion`);
  }
  if (typeof claimedId !== "string" || claimedId === "") throw invalidClient("client_assertion has no sub");
  if (credentials.clientId !== undefined && credentials.clientId !== claimedId) {
    throw new OAuthError("invalid_request", "client_id differs from the client assertion's sub");
  }
  const client = await p.findClient(claimedId);
  if (!client) throw invalidClient("unknown client");
  const method = alg !== undefined && isSecretAlg(alg) ? "client_secret_jwt" : "private_key_jwt";
  const methods = authMethodsOf(client);
  if (!methods.has(method)) throw invalidClient(`the client authenticates with ${[...methods].join(" or ")}, not ${method}`);
  const registered = client.token_endpoint_auth_signing_alg;
  const algorithms = registered ? [registered] : method === "client_secret_jwt" ? [...CLIENT_SECRET_ALGS] : [...CLIENT_ASYMMETRIC_ALGS];
  const now = p.now();
  let payload;
  try {
    ({ payload } = await verifyForeignJwt(assertion, client, {
      algorithms,
      now,
      issuer: client.client_id,
      subject: client.client_id,
      audience: audiences,
      requiredClaims: ["exp", "jti"],
    }));
  } catch (err) {
    if (err instanceof ForeignJwtError) throw invalidClient(`client_assertion: ${err.message}`);
    throw err;
  }
  const exp = payload.exp!;
  if (exp * 1000 > now + MAX_ASSERTION_LIFETIME_S * 1000) {
    throw invalidClient(`client_assertion: exp is more than ${MAX_ASSERTION_LIFETIME_S} seconds ahead`);
  }
  const jti = payload.jti;
  if (!isUsableJti(jti)) throw invalidClient(`client_assertion: jti must be a string of 1 to ${MAX_JTI_LENGTH} characters`);
  // Recorded before use: of two requests with one assertion (here or at another instance), one records it.
  if (!(await p.add("replay", `client_assertion:${client.client_id}:${jti}`, { expires_at: exp * 1000 }, { pruneAt: exp * 1000 }))) {
    throw invalidClient("client_assertion: jti was already used");
  }
  return client;
}
