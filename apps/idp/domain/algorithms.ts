/**
 * The JWS algorithms the provider signs with and accepts from clients, in one place, so discovery,
 * the key ring, client metadata checks and every verifier agree.
 */

/** Algorithms the provider signs ID tokens, userinfo responses and JWT access tokens with (one key each). */
export const SIGNING_ALGS = ["RS256", "PS256", "ES256", "EdDSA"] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
export const DEFAULT_SIGNING_ALG: SigningAlg = "RS256";

export const isSigningAlg = (alg: unknown): alg is SigningAlg => SIGNING_ALGS.includes(alg as SigningAlg);

/** Asymmetric algorithms a client may sign with (its `jwks` or `jwks_uri` keys). */
export const CLIENT_ASYMMETRIC_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"] as const;
/** HMAC algorithms keyed with the client's secret (client_secret_jwt, symmetric request objects). */
export const CLIENT_SECRET_ALGS = ["HS256", "HS384", "HS512"] as const;
/** What a client may put in `token_endpoint_auth_signing_alg` or `request_object_signing_alg` (plus `none` for the latter). */
export const CLIENT_SIGNING_ALGS: readonly string[] = [...CLIENT_ASYMMETRIC_ALGS, ...CLIENT_SECRET_ALGS];

export const isSecretAlg = (alg: string) => (CLIENT_SECRET_ALGS as readonly string[]).includes(alg);

/** The algorithm of a client's ID tokens (also its logout tokens and JWT access tokens): as registered, else RS256. */
export function idTokenAlg(client: { id_token_signed_response_alg?: string } | undefined): SigningAlg {
  const alg = client?.id_token_signed_response_alg;
  return isSigningAlg(alg) ? alg : DEFAULT_SIGNING_ALG;
}
