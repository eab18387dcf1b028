/**
 * DPoP proofs (RFC 9449), as the identity provider checks them at /token and /userinfo and the
 * route host's bearer authenticator at every request, checked with jose: typ `dpop+jwt`, alg ES256 or RS256, an embedded public
 * JWK, `jti`, `htm`, `htu` (compared without query and fragment), a fresh `iat` (±5 min) and, at
 * resource endpoints, `ath`. Replay is checked by the caller against the state store, keyed by
 * the key's thumbprint and the jti. No nonces (the spec says so).
 */
import { CodedError } from "#lib/errors";
import type { JWK } from "jose";
import { loadJose, sha256Base64url } from "./jose.ts";

export const DPOP_ALGS = ["ES256", "RS256"];
export const DPOP_IAT_WINDOW_S = 300;

/** The OAuth error code a bad, repeated or replayed DPoP proof is answered with (RFC 9449 §7.1). */
export type DpopErrorCode = "invalid_dpop_proof";

export class DpopError extends CodedError<DpopErrorCode> {
  constructor(message: string) {
    super("invalid_dpop_proof", message);
  }
}

export interface DpopExpectation {
  method: string;
  /** Acceptable `htu` values (the advertised endpoint URL and the URL the request arrived at). */
  urls: string[];
  /** Provider clock, in ms. */
  now: number;
  /** The access token, when the proof must carry `ath`. */
  accessToken?: string;
}

export interface VerifiedProof {
  jkt: string;
  jti: string;
  iat: number;
}

/** Scheme, host, port and path only: the form `htu` is compared in. */
export function htuForm(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

export async function verifyDpopProof(proof: string, expect: DpopExpectation): Promise<VerifiedProof> {
  const { EmbeddedJWK, calculateJwkThumbprint, decodeProtectedHeader, jwtVerify } = await loadJose();
  let header;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw new DpopError("DPoP proof is not a JWT");
  }
  if (header.typ !== "dpop+jwt") throw new DpopError("DPoP proof typ must be dpop+jwt");
  if (!DPOP_ALGS.includes(header.alg ?? "")) throw new DpopError(`DPoP proof alg must be one of ${DPOP_ALGS.join(", ")}`);
  let payload;
  try {
    // EmbeddedJWK refuses a private key in the header; currentDate keeps jose on our clock.
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: "dpop+jwt", algorithms: DPOP_ALGS, currentDate: new Date(expect.now) }));
  } catch (err) {
    throw new DpopError(`invalid DPoP proof: ${(err as Error).message}`);
  }
  const { jti, htm, htu, iat, ath } = payload as Record<string, unknown>;
  if (typeof jti !== "string" || jti === "" || jti.length > 256) throw new DpopError("DPoP proof needs a jti");
  if (htm !== expect.method) throw new DpopError("DPoP proof htm does not match the request method");
  const target = typeof htu === "string" ? htuForm(htu) : undefined;
  if (!target || !expect.urls.some((u) => htuForm(u) === target)) throw new DpopError("DPoP proof htu does not match the request URL");
  if (typeof iat !== "number" || Math.abs(iat - expect.now / 1000) > DPOP_IAT_WINDOW_S) throw new DpopError("DPoP proof iat is not fresh");
  if (expect.accessToken !== undefined) {
    if (typeof ath !== "string") throw new DpopError("DPoP proof needs ath");
    if (ath !== (await sha256Base64url(expect.accessToken))) throw new DpopError("DPoP proof ath does not match the access token");
  }
  const jkt = await calculateJwkThumbprint(header.jwk as JWK, "sha256");
  return { jkt, jti, iat };
}
