/**
 * Keys of a party that signs JWTs for the provider to check: a client (its `jwks` or `jwks_uri`,
 * or its secret for HMAC algorithms) or a trusted issuer of the JWT bearer grant. A `jwks_uri` is
 * fetched from loopback URLs only (a development provider must not be made to reach out to the
 * network), through jose's remote key set, which caches and refetches on an unknown `kid`.
 */
import type { JWTHeaderParameters, JWTPayload, JWTVerifyGetKey } from "jose";
import { loadJose } from "#lib/oauth";
import { isSecretAlg } from "./algorithms.ts";
import type { JwkSet } from "./clients.ts";

interface KeyHolder {
  jwks?: JwkSet;
  jwks_uri?: string;
  /** The client secret: the HMAC key of HS256/384/512 (client_secret_jwt, symmetric request objects). */
  secret?: string;
}

/** Why a JWT of another party did not verify: the message says what, for error_description. */
export class ForeignJwtError extends Error {}

/** Longest `jti` the replay cache keeps (a key of the state store). */
export const MAX_JTI_LENGTH = 256;
/**
 * Is this a `jti` the replay cache can hold: a string (RFC 7519 §4.1.7) of 1 to MAX_JTI_LENGTH
 * characters? Anything else (an array's `length` is 1 whatever its text) would bypass the bound.
 */
export const isUsableJti = (jti: unknown): jti is string => typeof jti === "string" && jti !== "" && jti.length <= MAX_JTI_LENGTH;

/** A JWT header's `typ` as a media type to compare (RFC 8725 §3.11): lower-cased, without an
 * `application/` prefix; undefined when it is not a string. */
export const typMediaType = (typ: unknown): string | undefined => typeof typ === "string" ? typ.toLowerCase().replace(/^application\//, "") : undefined;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Is this a URL the provider may fetch keys from (http(s) on a loopback host)? */
export function isLoopbackUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

const localSets = new WeakMap<JwkSet, JWTVerifyGetKey>();
/** Remote key sets by URL, kept so their cache serves later requests; bounded. */
const remoteSets = new Map<string, JWTVerifyGetKey>();
const MAX_REMOTE_SETS = 64;

async function keySetOf(holder: KeyHolder): Promise<JWTVerifyGetKey | undefined> {
  const jose = await loadJose();
  if (holder.jwks) {
    let set = localSets.get(holder.jwks);
    if (!set) localSets.set(holder.jwks, set = jose.createLocalJWKSet(holder.jwks as Parameters<typeof jose.createLocalJWKSet>[0]));
    return set;
  }
  if (holder.jwks_uri) {
    if (!isLoopbackUrl(holder.jwks_uri)) throw new ForeignJwtError("jwks_uri is not a loopback URL; the provider fetches keys from loopback only");
    let set = remoteSets.get(holder.jwks_uri);
    if (!set) {
      if (remoteSets.size >= MAX_REMOTE_SETS) remoteSets.delete(remoteSets.keys().next().value!);
      set = jose.createRemoteJWKSet(new URL(holder.jwks_uri), { timeoutDuration: 5000, cooldownDuration: 1000, cacheMaxAge: 60_000 });
      remoteSets.set(holder.jwks_uri, set);
    }
    return set;
  }
  return undefined;
}

interface ForeignJwtCheck {
  /** Acceptable header algs (the party's registered one, or the provider's list). */
  algorithms: readonly string[];
  /** Provider clock, ms: `exp` and `nbf` are checked against it. */
  now: number;
  /** Claims that must be present. */
  requiredClaims?: string[];
  /** Values any one of which `aud` must contain. */
  audience?: string[];
  issuer?: string;
  subject?: string;
  /** Seconds of leeway for `exp`, `nbf` and `iat`. */
  clockTolerance?: number;
}

/**
 * Verifies a JWT signed by the holder: the key by the header's alg (an HMAC alg takes the secret,
 * any other the key set), then the claims jose checks. `none` is never accepted here.
 */
export async function verifyForeignJwt(
  jwt: string,
  holder: KeyHolder,
  check: ForeignJwtCheck,
): Promise<{ payload: JWTPayload; protectedHeader: JWTHeaderParameters }> {
  const jose = await loadJose();
  let alg: string | undefined;
  try {
    alg = jose.decodeProtectedHeader(jwt).alg;
  } catch {
    throw new ForeignJwtError("not a JWS");
  }
  if (!alg || !check.algorithms.includes(alg)) {
    throw new ForeignJwtError(`alg ${alg ?? "(none)"} is not allowed here (expected ${check.algorithms.join(", ")})`);
  }
  let key: JWTVerifyGetKey | Uint8Array | undefined;
  if (isSecretAlg(alg)) {
    if (holder.secret === undefined) throw new ForeignJwtError(`${alg} needs a client secret; this party has none`);
    key = new TextEncoder().encode(holder.secret);
  } else {
    key = await keySetOf(holder);
    if (!key) throw new ForeignJwtError("no keys registered (jwks or jwks_uri)");
  }
  const options = {
    algorithms: [alg],
    currentDate: new Date(check.now),
    clockTolerance: check.clockTolerance ?? 0,
    ...(check.requiredClaims ? { requiredClaims: check.requiredClaims } : {}),
    ...(check.audience ? { audience: check.audience } : {}),
    ...(check.issuer !== undefined ? { issuer: check.issuer } : {}),
    ...(check.subject !== undefined ? { subject: check.subject } : {}),
  };
  try {
    return key instanceof Uint8Array ? await jose.jwtVerify(jwt, key, options) : await jose.jwtVerify(jwt, key, options);
  } catch (err) {
    throw new ForeignJwtError((err as Error).message);
  }
}
