/**
 * Signing keys: three RSA keys by `kid`, published at /jwks. Configured private JWKs are used as
 * given; missing ones come from the state store (so they survive a restart, and every instance on
 * one database signs with the same keys) or are generated (asynchronously, never before the
 * server listens) and saved there.
 */
import type { JWK, JWTPayload } from "jose";
import { loadJose } from "#lib/oauth";
import { SigningKeysError } from "./errors.ts";
import type { SignKey } from "./scenarios.ts";

export const KIDS = ["dev-key-1", "rotated-key-2", "bad-sig-key"] as const;
export type Kid = (typeof KIDS)[number];
/** The `kid` the kid-not-found scenario puts in its ID token header; /jwks never has it. */
export const UNKNOWN_KID = "no-such-key";

interface SigningKey {
  kid: Kid;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface KeyRing {
  /** The /jwks body, computed once. */
  readonly jwksBody: string;
  /** Signs an ID token with dev-key-1, or as the scenario's `SignKey` says; `typ` "JWT" unless given. */
  sign(claims: JWTPayload, signKey?: SignKey, typ?: string): Promise<string>;
}

export interface KeySources {
  /** A private JWK set from configuration (`{keys:[...]}`), not validated yet. */
  configured?: unknown;
  /** Private JWKs persisted earlier, by kid. */
  stored: Partial<Record<Kid, JWK>>;
  /** Persists a generated private JWK; returns the key to use (another instance's, if it stored one first). */
  save(kid: Kid, jwk: JWK): Promise<JWK>;
}

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

function publicPart(jwk: JWK, kid: Kid): JWK {
  const out: JWK = { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg: "RS256", use: "sig" };
  for (const m of PRIVATE_MEMBERS) delete (out as Record<string, unknown>)[m];
  return out;
}

/** Validates the configured key set: RSA private JWKs whose kids are ours. */
export function parseConfiguredKeys(value: unknown): Partial<Record<Kid, JWK>> {
  if (value === undefined || value === null) return {};
  const keys = (value as { keys?: unknown }).keys;
  if (typeof value !== "object" || !Array.isArray(keys)) throw new SigningKeysError('signing keys must be a JWK set: {"keys": [...]}');
  const out: Partial<Record<Kid, JWK>> = {};
  keys.forEach((key: unknown, i) => {
    const jwk = key as JWK;
    if (typeof key !== "object" || key === null) throw new SigningKeysError(`keys[${i}] is not an object`);
    if (!KIDS.includes(jwk.kid as Kid)) throw new SigningKeysError(`keys[${i}]: kid must be one of ${KIDS.join(", ")}`);
    if (jwk.kty !== "RSA" || typeof jwk.n !== "string" || typeof jwk.d !== "string") {
      throw new SigningKeysError(`keys[${i}] (${jwk.kid}): expected a private RSA JWK (kty RSA with n, e, d, ...)`);
    }
    out[jwk.kid as Kid] = jwk;
  });
  return out;
}

async function importKey(kid: Kid, jwk: JWK): Promise<SigningKey> {
  try {
    const { importJWK } = await loadJose();
    const privateKey = (await importJWK({ ...jwk, alg: "RS256" }, "RS256")) as CryptoKey;
    return { kid, privateKey, publicJwk: publicPart(jwk, kid) };
  } catch (err) {
    throw new SigningKeysError(`${kid}: not a usable RS256 private key (${(err as Error).message})`);
  }
}

export async function generateSigningKey(kid: Kid): Promise<JWK> {
  const { generateKeyPair, exportJWK } = await loadJose();
  const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  return { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
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
  const byKid = new Map(keys.map((k) => [k.kid, k]));
  const jwksBody = JSON.stringify({ keys: keys.map((k) => k.publicJwk) });
  const active = byKid.get("dev-key-1")!;
  return {
    jwksBody,
    sign(claims, signKey, typ = "JWT") {
      // kid-not-found and bad-signature sign with dev-key-1 under a kid whose published key (if
      // any) is not dev-key-1's, so a verifier fails to find or to verify the key.
      const [kid, key] = signKey === "rotated"
        ? (["rotated-key-2", byKid.get("rotated-key-2")!] as const)
        : signKey === "kid-not-found"
        ? ([UNKNOWN_KID, active] as const)
        : signKey === "bad-signature"
        ? (["bad-sig-key", active] as const)
        : (["dev-key-1", active] as const);
      return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid, typ }).sign(key.privateKey);
    },
  };
}
