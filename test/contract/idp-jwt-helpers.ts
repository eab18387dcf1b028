/**
 * Helpers for the suites of JWT features (client assertions, request objects, signing algorithms,
 * the JWT bearer grant): key pairs a test client holds, hand-made JWTs for the refusals
 * openid-client never produces, clients configured through IDP_CLIENTS, and a loopback server
 * publishing a key set (a `jwks_uri`). Not a test file.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";

export const CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

export interface TestKey {
  alg: string;
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A fresh key pair of `alg`, its public JWK carrying kid, alg and use. */
export async function testKey(alg: string, kid = `${alg.toLowerCase()}-${crypto.randomUUID().slice(0, 8)}`): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

/** Signs claims with a test key (or an HMAC secret), header alg/kid/typ as given. */
export function signJwt(claims: JWTPayload, key: TestKey | { alg: string; secret: string }, header: Record<string, unknown> = {}): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: key.alg, ...("kid" in key ? { kid: key.kid } : {}), ...header });
  return "secret" in key ? jwt.sign(new TextEncoder().encode(key.secret)) : jwt.sign(key.privateKey);
}

/** An unsigned JWT (`alg: none`), as jose will not make one. */
export function unsignedJwt(claims: JWTPayload): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none" })}.${part(claims)}.`;
}

export const nowS = () => Math.floor(Date.now() / 1000);

/** Claims of a client assertion (RFC 7523 §3) for `clientId` with audience `aud`; `overrides` replace them. */
export function assertionClaims(clientId: string, aud: string | string[], overrides: JWTPayload = {}): JWTPayload {
  return { iss: clientId, sub: clientId, aud, jti: crypto.randomUUID(), iat: nowS(), exp: nowS() + 60, ...overrides };
}

/** The form fields of a client assertion. */
export const assertionFields = (assertion: string) => ({ client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion });

/** A loopback server publishing `{keys}` at `/jwks` (a client's or trusted issuer's jwks_uri). */
export async function jwksServer(keys: JWK[]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    res.writeHead(req.url === "/jwks" ? 200 : 404, { "content-type": "application/json" });
    res.end(req.url === "/jwks" ? JSON.stringify({ keys }) : "{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
