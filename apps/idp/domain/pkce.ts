/** PKCE (RFC 7636): challenge methods S256 and plain. */
import { sha256Base64url } from "#lib/oauth";

export type PkceMethod = "S256" | "plain";
export const PKCE_METHODS: readonly PkceMethod[] = ["S256", "plain"];

/** Verifiers and challenges: 43 to 128 unreserved characters. */
const SHAPE = /^[A-Za-z0-9._~-]{43,128}$/;

export const isWellFormedPkceValue = (value: string) => SHAPE.test(value);

export function isPkceMethod(value: string): value is PkceMethod {
  return (PKCE_METHODS as readonly string[]).includes(value);
}

export async function verifyPkce(method: PkceMethod, challenge: string, verifier: string): Promise<boolean> {
  if (!SHAPE.test(verifier)) return false;
  const derived = method === "S256" ? await sha256Base64url(verifier) : verifier;
  return derived === challenge;
}
