/**
 * An OIDC issuer as the route host sees it: its discovery document (fetched on first use, again
 * after a failure) and its key set (jose's remote JWKS: cached, fetched again for an unknown key
 * at most every `jwksCooldownMs`). Shared by the bearer authenticator and browser sign-in.
 */
import { loadJose } from "#lib/oauth";

/** The `Authorization` value of a client authenticating with its secret (RFC 6749 §2.3.1). */
export const basicAuth = (clientId: string, secret: string) => `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`)}`;

export interface IssuerMetadata {
  issuer: string;
  jwks: ReturnType<typeof import("jose").createRemoteJWKSet>;
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  introspectionEndpoint?: string;
  endSessionEndpoint?: string;
}

interface IssuerOptions {
  fetch?: typeof fetch;
  /** After fetching the JWKS, how long a token with an unknown key waits before the next fetch,
   * ms (default 30 s: a flood of forged kids cannot make the host hammer the issuer). */
  jwksCooldownMs?: number;
}

export function issuerMetadata(issuerUrl: string, options: IssuerOptions = {}): () => Promise<IssuerMetadata> {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const issuer = issuerUrl.replace(/\/+$/, "");
  let metadata: Promise<IssuerMetadata> | undefined;
  return () => {
    metadata ??= (async () => {
      const res = await doFetch(`${issuer}/.well-known/openid-configuration`, { headers: { accept: "application/json" } });
      if (!res.ok) throw new Error(`discovery at ${issuer} answered ${res.status}`);
      const doc = (await res.json()) as Record<string, string | undefined>;
      if (!doc.jwks_uri) throw new Error(`discovery at ${issuer} names no jwks_uri`);
      const { createRemoteJWKSet, customFetch } = await loadJose();
      return {
        issuer: doc.issuer ?? issuer,
        jwks: createRemoteJWKSet(new URL(doc.jwks_uri), {
          cooldownDuration: options.jwksCooldownMs ?? 30_000,
          cacheMaxAge: 10 * 60_000,
          [customFetch]: (url: string, init: RequestInit) => doFetch(url, init),
        }),
        authorizationEndpoint: doc.authorization_endpoint,
        tokenEndpoint: doc.token_endpoint,
        introspectionEndpoint: doc.introspection_endpoint,
        endSessionEndpoint: doc.end_session_endpoint,
      };
    })();
    // A failed discovery is tried again next time, not remembered.
    metadata.catch(() => (metadata = undefined));
    return metadata;
  };
}
