/**
 * Request objects (RFC 9101, OIDC Core §6.1): an authorization request's parameters as a JWT the
 * client signed with a key of its `jwks` or `jwks_uri` (or, HS256/384/512, its secret). Unsigned
 * (`alg: none`) only for a client that registered `request_object_signing_alg: none`. A present
 * `iss` must be the client, a present `aud` must name the issuer; `exp` and `nbf` are checked on
 * the provider's clock. The object's parameters replace the request's (RFC 9101 §6.3).
 */
import { CLIENT_ASYMMETRIC_ALGS, CLIENT_SECRET_ALGS } from "./algorithms.ts";
import { ForeignJwtError, verifyForeignJwt } from "./client-keys.ts";
import type { Client } from "./clients.ts";
import { loadJose } from "#lib/oauth";

/** The `typ` RFC 9101 §10.8 registers; `JWT` and none are accepted too (OIDC Core §6.1 has none). */
const REQUEST_OBJECT_TYPES = [undefined, "JWT", "oauth-authz-req+jwt"];
/** JWT claims that are not authorization request parameters. */
const JWT_CLAIMS = new Set(["iss", "aud", "exp", "nbf", "iat", "jti", "sub"]);

export class RequestObjectError extends Error {}

/** `request_object_signing_alg_values_supported` of discovery. */
export const REQUEST_OBJECT_ALGS = [...CLIENT_ASYMMETRIC_ALGS, ...CLIENT_SECRET_ALGS, "none"];

interface RequestObjectCheck {
  client: Client;
  /** Whether an `aud` value names this provider (its issuer). */
  isIssuer(aud: string): boolean;
  /** Provider clock, ms. */
  now: number;
}

/** A parameter's object value as JSON; nested too deeply to serialize (the stack runs out), a refusal. */
function jsonOf(name: string, value: object): string {
  try {
    return JSON.stringify(value);
  } catch {
    throw new RequestObjectError(`${name} is nested too deeply`);
  }
}

/** Verifies the object and returns its parameters (values as strings; objects such as `claims` as JSON). */
export async function readRequestObject(jwt: string, check: RequestObjectCheck): Promise<Map<string, string>> {
  const jose = await loadJose();
  const { client } = check;
  let header;
  try {
    header = jose.decodeProtectedHeader(jwt);
  } catch {
    throw new RequestObjectError("request is not a JWT");
  }
  if (!REQUEST_OBJECT_TYPES.includes(header.typ)) throw new RequestObjectError(`typ ${header.typ} is not a request object's`);
  const registered = client.request_object_signing_alg;
  let payload: Record<string, unknown>;
  if (header.alg === "none") {
    if (registered !== "none") {
      throw new RequestObjectError("unsigned request objects are refused: the client did not register request_object_signing_alg none");
    }
    try {
      ({ payload } = jose.UnsecuredJWT.decode(jwt, { currentDate: new Date(check.now) }));
    } catch (err) {
      throw new RequestObjectError((err as Error).message);
    }
  } else {
    if (registered === "none") throw new RequestObjectError("the client registered unsigned request objects (request_object_signing_alg none)");
    const algorithms = registered ? [registered] : [...CLIENT_ASYMMETRIC_ALGS, ...(client.secret !== undefined ? CLIENT_SECRET_ALGS : [])];
    try {
      ({ payload } = await verifyForeignJwt(jwt, client, { algorithms, now: check.now }));
    } catch (err) {
      if (err instanceof ForeignJwtError) throw new RequestObjectError(err.message);
      throw err;
    }
  }
  if (payload.iss !== undefined && payload.iss !== client.client_id) throw new RequestObjectError("iss must be the client_id");
  if (payload.aud !== undefined) {
    const auds = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (!auds.some((a) => typeof a === "string" && check.isIssuer(a))) throw new RequestObjectError("aud must be the issuer");
  }
  if (payload.client_id !== undefined && payload.client_id !== client.client_id) throw new RequestObjectError("client_id differs from the request's");
  if (payload.request !== undefined || payload.request_uri !== undefined) throw new RequestObjectError("a request object must not hold request or request_uri");
  const params = new Map<string, string>();
  for (const [name, value] of Object.entries(payload)) {
    if (JWT_CLAIMS.has(name) || value === null || value === undefined || value === "") continue;
    params.set(name, typeof value === "string" ? value : typeof value === "object" ? jsonOf(name, value) : String(value));
  }
  params.set("client_id", client.client_id);
  return params;
}
