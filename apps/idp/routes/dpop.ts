/** DPoP proof checks at the endpoints, with the replay cache (per key thumbprint and jti). */
import type { Context } from "hono";
import { DPOP_IAT_WINDOW_S, DpopError, type VerifiedProof, verifyDpopProof } from "#lib/oauth";
import type { Provider } from "../domain/provider.ts";

/**
 * Verifies the request's `DPoP` header (undefined when there is none) and records its jti.
 * Throws DpopError for a bad, repeated or replayed proof.
 */
export async function checkProof(c: Context, p: Provider, advertisedUrl: string, accessToken?: string): Promise<VerifiedProof | undefined> {
  const headers = c.req.raw.headers.get("dpop");
  if (headers === null) return undefined;
  if (headers.includes(",")) throw new DpopError("exactly one DPoP header is allowed");
  const now = p.now();
  const proof = await verifyDpopProof(headers.trim(), { method: c.req.method, urls: [advertisedUrl, c.req.url], now, accessToken });
  const key = `${proof.jkt}:${proof.jti}`;
  const expiresAt = now + 2 * DPOP_IAT_WINDOW_S * 1000;
  // Recorded before use: of two requests with one proof (here or at another instance), one records it.
  if (!(await p.add("replay", key, { expires_at: expiresAt }, { pruneAt: expiresAt }))) throw new DpopError("DPoP proof jti was already used");
  return proof;
}
