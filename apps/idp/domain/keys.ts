/**
 * Signing keys: one active key per algorithm (RS256, PS256, ES256, EdDSA), each with the key it
 * replaced at the last rotation, plus `bad-sig-key`, all published at /jwks with `kid` and `alg`.
 * The RS256 kids keep their historic names (`dev-key-1`, `rotated-key-2`); the others are suffixed
 * by algorithm. Configured private JWKs are used as given; missing ones come from the state store
 * (so they survive a restart, and every instance on one database signs with the same keys) or are
 * generated (asynchronously, never before the server listens) and saved there.
 */
import type { JWK, JWTPayload } from "jose";
import { loadJose } from "#lib/oauth";
import { DEFAULT_SIGNING_ALG, SIGNING_ALGS, type SigningAlg } from "./algorithms.ts";
import { SigningKeysError } from "./errors.ts";
import type { SignKey } from "./scenarios.ts";

/** The active key of each algorithm. */
export const ACTIVE_KID = { RS256: "dev-key-1", PS256: "dev-key-1-ps256", ES256: "dev-key-1-es256", EdDSA: "dev-key-1-eddsa" } as const;
/** The key each algorithm's active key replaced (the `key-rotated` scenario signs with it). */
export const ROTATED_KID = { RS256: "rotated-key-2", PS256: "rotated-key-2-ps256", ES256: "rotated-key-2-es256", EdDSA: "rotated-key-2-eddsa" } as const;
const BAD_SIG_KID = "bad-sig-key";
export const KIDS = [...SIGNING_ALGS.flatMap((alg) => [ACTIVE_KID[alg], ROTATED_KID[alg]]), BAD_SIG_KID] as const;
export type Kid = (typeof KIDS)[number];
/** The `kid` the kid-not-found scenario puts in its ID token header; /jwks never has it. */
const UNKNOWN_KID = "no-such-key";

/** The algorithm a kid's key is for. */
function algOfKid(kid: Kid): SigningAlg {
  return SIGNING_ALGS.find((alg) => ACTIVE_KID[alg] === kid || ROTATED_KID[alg] === kid) ?? "RS256";
}

/** The JWK key type (and curve) each algorithm needs. */
const KEY_TYPE: Record<SigningAlg, { kty: string; crv?: string }> = {
  RS256: { kty: "RSA" },
  PS256: { kty: "RSA" },
  ES256: { kty: "EC", crv: "P-256" },
  EdDSA: { kty: "OKP", crv: "Ed25519" },
};
const PUBLIC_MEMBERS = ["kty", "crv", "n", "e", "x", "y"] as const;

interface SigningKey {
  kid: Kid;
  alg: SigningAlg;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface KeyRing {
  /** The /jwks body, computed once. */
  readonly jwksBody: string;
  /**
   * Signs with the active key of `alg` (default RS256), or as the scenario's `SignKey` says;
   * `typ` "JWT" unless given.
   */
  sign(claims: JWTPayload, signKey?: SignKey, typ?: string, alg?: SigningAlg): Promise<string>;
}

interface KeySources {
  /** A private JWK set from configuration (`{keys:[...]}`), not validated yet. */
  configured?: unknown;
  /** Private JWKs persisted earlier, by kid. */
  stored: Partial<Record<Kid, JWK>>;
  /** Persists a generated private JWK; returns the key to use (another instance's, if it stored one first). */
  save(kid: Kid, jwk: JWK): Promise<JWK>;
}

function publicPart(jwk: JWK, kid: Kid, alg: SigningAlg): JWK {
  const out: Record<string, unknown> = {};
  for (const m of PUBLIC_MEMBERS) if (jwk[m] !== undefined) out[m] = jwk[m];
  return { ...out, kid, alg, use: "sig" } as JWK;
}

/** Validates the configured key set: private JWKs whose kids are ours, of their algorithm's key type. */
export function parseConfiguredKeys(value: unknown): Partial<Record<Kid, JWK>> {
  if (value === undefined || value === null) return {};
  const keys = (value as { keys?: unknown }).keys;
  if (typeof value !== "object" || !Array.isArray(keys)) throw new SigningKeysError('signing keys must be a JWK set: {"keys": [...]}');
  const out: Partial<Record<Kid, JWK>> = {};
  keys.forEach((key: unknown, i) => {
    const jwk = key as JWK;
    if (typeof key !== "object" || key === null) throw new SigningKeysError(`keys[${i}] is not an object`);
    if (!KIDS.includes(jwk.kid as Kid)) throw new SigningKeysError(`keys[${i}]: kid must be one of ${KIDS.join(", ")}`);
    const alg = algOfKid(jwk.kid as Kid);
    const type = KEY_TYPE[alg];
    if (jwk.kty !== type.kty || (type.crv !== undefined && jwk.crv !== type.crv) || typeof jwk.d !== "string") {
      throw new SigningKeysError(`keys[${i}] (${jwk.kid}): expected a private ${type.kty}${type.crv ? ` ${type.crv}` : ""} JWK for ${alg}`);
    }
    out[jwk.kid as Kid] = jwk;
  });
  return out;
}

/** Imports a private JWK for its kid's algorithm (SigningKeysError if it cannot be used). */
export async function importSigningKey(kid: Kid, jwk: JWK): Promise<CryptoKey> {
  const alg = algOfKid(kid);
  try {
    const { importJWK } = await loadJose();
    return (await importJWK({ ...jwk, alg }, alg)) as CryptoKey;
  } catch (err) {
    throw new SigningKeysError(`${kid} is not a usable ${alg} private key (${(err as Error).message})`);
  }
}

async function importKey(kid: Kid, jwk: JWK): Promise<SigningKey> {
  const alg = algOfKid(kid);
  return { kid, alg, privateKey: await importSigningKey(kid, jwk), publicJwk: publicPart(jwk, kid, alg) };
}

export async function generateSigningKey(kid: Kid): Promise<JWK> {
  const { generateKeyPair, exportJWK } = await loadJose();
  const alg = algOfKid(kid);
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(KEY_TYPE[alg].kty === "RSA" ? { modulusLength: 2048 } : {}) });
  return { ...(await exportJWK(privateKey)), kid, alg, use: "sig" };
}

export async function loadKeyRing(sources: KeySources): Promise<KeyRing> {
  const configured = parseConfiguredKeys(sources.configured);
  const { SignJWT } = await loadJose();
  const keys = await Promise.all(
    KIDS.map(async (kid) => {
      let jwk = configured[kid] ?? sources.stored[kid];
      if (!jwk) jwk = await sources.save(kid, await generateSigningKey(kid));
      return importKey(kid, jwk);
    }),
  );
  const byKid = new Map<string, SigningKey>(keys.map((k) => [k.kid, k]));
  const jwksBody = JSON.stringify({ keys: keys.map((k) => k.publicJwk) });
  return {
    jwksBody,
    sign(claims, signKey, typ = "JWT", alg = DEFAULT_SIGNING_ALG) {
      const active = byKid.get(ACTIVE_KID[alg])!;
      // kid-not-found and bad-signature sign with the active key under a kid whose published key
      // (if any) is not that key, so a verifier fails to find or to verify the key. bad-sig-key is
      // an RSA key: other algorithms name their rotated key, so the verifier finds a key of the
      // right type and the signature, not the lookup, fails.
      const [kid, key] = signKey === "rotated"
        ? ([ROTATED_KID[alg], byKid.get(ROTATED_KID[alg])!] as const)
        : signKey === "kid-not-found"
        ? ([UNKNOWN_KID, active] as const)
        : signKey === "bad-signature"
        ? ([alg === "RS256" ? BAD_SIG_KID : ROTATED_KID[alg], active] as const)
        : ([active.kid, active] as const);
      return new SignJWT(claims).setProtectedHeader({ alg, kid, typ }).sign(key.privateKey);
    },
  };
}
