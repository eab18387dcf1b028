/** authenticateRequestClient with client assertions: the checks of OIDC Core §9 on the provider's injected clock. */
import { beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { createLogger } from "#lib/log";
import { createProvider } from "../app.ts";
import { authenticateRequestClient, MAX_ASSERTION_LIFETIME_S } from "./client-auth.ts";
import { JWT_BEARER_ASSERTION_TYPE } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import type { Provider } from "./provider.ts";

const ISSUER = "http://idp.test";
const NOW = Date.parse("2026-06-01T00:00:00Z");
const NOW_S = NOW / 1000;
const SECRET = "a-client-secret-long-enough-for-hs256";

let provider: Provider;
let key: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair("ES256", { extractable: true });
  key = pair.privateKey;
  provider = createProvider({
    issuer: ISSUER,
    now: () => NOW,
    logger: createLogger({ level: "error" }),
    clients: [
      { client_id: "pk", redirect_uris: ["http://localhost/cb"], jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: "k1" }] } },
      { client_id: "cs", client_secret: SECRET, redirect_uris: ["http://localhost/cb"], token_endpoint_auth_method: "client_secret_jwt" },
    ],
  });
});

const claims = (overrides: Record<string, unknown> = {}) => ({ iss: "pk", sub: "pk", aud: ISSUER, jti: crypto.randomUUID(), exp: NOW_S + 60, ...overrides });
const es256 = (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(key);

function authenticate(assertion: string, extra: Record<string, string> = {}) {
  const form = new Map(Object.entries({ client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion, ...extra }));
  return authenticateRequestClient(provider, { authorization: undefined, form, audiences: [ISSUER, `${ISSUER}/token`] });
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(OAuthError);
  return `${(err as OAuthError).status} ${(err as OAuthError).error}: ${(err as OAuthError).description}`;
}

describe("private_key_jwt", () => {
  it("accepts an assertion for the issuer or the token endpoint, once per jti", async () => {
    expect((await authenticate(await es256(claims()))).client_id).toBe("pk");
    const assertion = await es256(claims({ aud: `${ISSUER}/token` }));
    expect((await authenticate(assertion)).client_id).toBe("pk");
    expect(await failure(authenticate(assertion))).toMatch(/^401 invalid_client: .*jti was already used/);
  });

  it("measures exp on the provider's clock and bounds how far ahead it is", async () => {
    expect(await failure(authenticate(await es256(claims({ exp: NOW_S - 1 }))))).toMatch(/401 invalid_client: .*exp/);
    expect((await authenticate(await es256(claims({ exp: NOW_S + MAX_ASSERTION_LIFETIME_S })))).client_id).toBe("pk");
    expect(await failure(authenticate(await es256(claims({ exp: NOW_S + MAX_ASSERTION_LIFETIME_S + 1 }))))).toMatch(/exp is more than/);
  });

  it("refuses a jti that is not a string of 1 to 256 characters (an array's length is 1 whatever it holds)", async () => {
    for (const jti of ["", "j".repeat(257), ["j".repeat(1000)], 5]) {
      expect(await failure(authenticate(await es256(claims({ jti })))), JSON.stringify(jti).slice(0, 20)).toMatch(
        /^401 invalid_client: .*jti must be a string/,
      );
    }
  });

  it("refuses a wrong audience, a missing jti, iss other than sub, and a body client_id that differs", async () => {
    expect(await failure(authenticate(await es256(claims({ aud: "http://other.test" }))))).toMatch(/aud/);
    expect(await failure(authenticate(await es256(claims({ jti: undefined }))))).toMatch(/jti/);
    expect(await failure(authenticate(await es256(claims({ iss: "cs" }))))).toMatch(/iss/);
    expect(await failure(authenticate(await es256(claims()), { client_id: "cs" }))).toMatch(/^400 invalid_request/);
  });
});

describe("client_secret_jwt", () => {
  const hs = (c: Record<string, unknown>, secret = SECRET) => new SignJWT(c).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(secret));

  it("accepts HS256 with the client's secret, refuses another secret and the secret itself", async () => {
    expect(await authenticate(await hs(claims({ iss: "cs", sub: "cs" })))).toMatchObject({ client_id: "cs" });
    expect(await failure(authenticate(await hs(claims({ iss: "cs", sub: "cs" }), "another-secret-of-enough-length-000")))).toMatch(/signature/);
    const basic = `Basic ${btoa(`cs:${SECRET}`)}`;
    const err = await authenticateRequestClient(provider, { authorization: basic, form: new Map(), audiences: [ISSUER] }).catch((e: OAuthError) => e);
    expect((err as OAuthError).description).toMatch(/client_secret_jwt, not client_secret_basic/);
  });
});
