/** Randomness as a parameter: opaque secrets and user codes take a `RandomBytes` source. */
import { encode as base64urlEncode } from "jose/base64url";

/**
 * Unpadded base64url of bytes (RFC 4648 §5), for random secrets and hashes: jose's, from its small
 * `jose/base64url` module (the rest of jose loads on demand, see `loadJose`).
 */
export { base64urlEncode };

export type RandomBytes = (length: number) => Uint8Array;

/**
 * jose, loaded on first use: it is the largest import, and /healthz must answer quickly after
 * start, before anything needs a JWT or a key.
 */
let joseModule: Promise<typeof import("jose")> | undefined;
export const loadJose = () => (joseModule ??= import("jose"));

export const cryptoRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length));

/** An opaque, URL-safe secret (codes, tokens, session ids): 32 random bytes, 43 characters. */
export function opaqueSecret(random: RandomBytes, bytes = 32): string {
  return base64urlEncode(random(bytes));
}

/** Base64url SHA-256 of a string (PKCE S256, DPoP `ath`). */
export async function sha256Base64url(text: string): Promise<string> {
  return base64urlEncode(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

/** Compares two secrets in time that depends only on their lengths, not on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** The 8-character prefix under which debug listings show a secret. */
export const secretPrefix = (secret: string) => secret.slice(0, 8);
