/** Trusted issuers of the JWT bearer grant: their configuration's rules, and verifyGrantAssertion on the injected clock. */
import { beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { createLogger } from "#lib/log";
import { createProvider } from "../app.ts";
import { OAuthError, TrustedIssuersError } from "./errors.ts";
import { verifyGrantAssertion } from "./jwt-bearer.ts";
import { parseTrustedIssuers } from "./trusted-issuers.ts";
import type { Provider } from "./provider.ts";

const ISSUER = "http://idp.test";
const NOW = Date.parse("2026-06-01T00:00:00Z");
const NOW_S = NOW / 1000;

describe("parseTrustedIssuers", () => {
  it("takes a list or {issuers}, with exactly one of jwks and a loopback jwks_uri", () => {
    const jwks = { keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y" }] };
    expect(parseTrustedIssuers([{ issuer: "https://a.test", jwks }])).toHaveLength(1);
    expect(parseTrustedIssuers({ issuers: [{ issuer: "https://a.test", jwks_uri: "http://127.0.0.1:9/jwks" }] })).toHaveLength(1);
    for (
      const bad of [
        [{ issuer: "https://a.test" }],
        [{ issuer: "https://a.test", jwks, jwks_uri: "http://127.0.0.1:9/jwks" }],
        [{ issuer: "https://a.test", jwks_uri: "https://keys.example.com/jwks" }],
        [{ issuer: "", jwks }],
        [{ issuer: "https://a.test", jwks, unknown: 1 }],
        "not a list",
      ]
    ) expect(() => parseTrustedIssuers(bad), JSON.stringify(bad)).toThrow(TrustedIssuersError);
  });
});

describe("verifyGrantAssertion", () => {
  let provider: Provider;
  let key: CryptoKey;
  beforeAll(async () => {
    const pair = await generateKeyPair("PS256", { extractable: true });
    key = pair.privateKey;
    provider = createProvider({
      issuer: ISSUER,
      now: () => NOW,
      logger: createLogger({ level: "error" }),
      jwtBearerIssuers: [
        { issuer: "https://a.test", jwks: { keys: [await exportJWK(pair.publicKey)] }, subject_claim: "uid" },
        { issuer: "https://api.test", jwks: { keys: [await exportJWK(pair.publicKey)] }, audiences: ["my-api"] },
      ],
    });
  });
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT({ iss: "https://a.test", aud: ISSUER, exp: NOW_S + 60, uid: "u-1", ...claims }).setProtectedHeader({ alg: "PS256" }).sign(key);
  const reason = (p: Promise<unknown>) => p.then(() => "ok", (e: OAuthError) => `${e.error}: ${e.description}`);

  it("gives the subject from the configured claim, and spends a jti", async () => {
    expect((await verifyGrantAssertion(provider, await sign({}), [ISSUER])).subject).toBe("u-1");
    const once = await sign({ jti: "j-1" });
    expect(await reason(verifyGrantAssertion(provider, once, [ISSUER]))).toBe("ok");
    expect(await reason(verifyGrantAssertion(provider, once, [ISSUER]))).toMatch(/^invalid_grant: .*jti was already used/);
  });

  it("spends a jti once in the whole provider: not again at an issuer by path, where configured audiences are accepted too", async () => {
    const once = await new SignJWT({ iss: "https://api.test", aud: "my-api", sub: "u-2", exp: NOW_S + 60, jti: "j-api" }).setProtectedHeader({ alg: "PS256" })
      .sign(key);
    expect(await reason(verifyGrantAssertion(provider, once, [ISSUER]))).toBe("ok");
    const tenant = provider.pathIssuer("tenant-a");
    expect(await reason(verifyGrantAssertion(tenant, once, [`${ISSUER}/tenant-a`]))).toMatch(/^invalid_grant: .*jti was already used/);
  });

  it("refuses a jti that is not a string of 1 to 256 characters (an array's length is 1 whatever it holds)", async () => {
    for (const jti of ["", "j".repeat(257), ["j".repeat(1000)], 5]) {
      expect(await reason(verifyGrantAssertion(provider, await sign({ jti }), [ISSUER])), JSON.stringify(jti).slice(0, 20)).toMatch(
        /^invalid_grant: .*jti must be a string/,
      );
    }
  });

  it("refuses a JWT typed for another purpose (an access or logout token of a provider that trusts itself), from a trusted issuer too", async () => {
    for (const typ of ["at+jwt", "application/at+JWT", "logout+jwt"]) {
      const typed = await new SignJWT({ iss: "https://a.test", aud: ISSUER, exp: NOW_S + 60, uid: "u-1" }).setProtectedHeader({ alg: "PS256", typ }).sign(key);
      expect(await reason(verifyGrantAssertion(provider, typed, [ISSUER])), typ).toMatch(/^invalid_grant: .*is not an authorization grant/);
    }
    const plain = await new SignJWT({ iss: "https://a.test", aud: ISSUER, exp: NOW_S + 60, uid: "u-1" }).setProtectedHeader({ alg: "PS256", typ: "JWT" }).sign(
      key,
    );
    expect(await reason(verifyGrantAssertion(provider, plain, [ISSUER]))).toBe("ok");
  });

  it("refuses an untrusted issuer, a wrong audience, an expired assertion and one without the subject claim", async () => {
    expect(await reason(verifyGrantAssertion(provider, await sign({ iss: "https://b.test" }), [ISSUER]))).toMatch(/invalid_grant: .*not trusted/);
    expect(await reason(verifyGrantAssertion(provider, await sign({ aud: "x" }), [ISSUER]))).toMatch(/invalid_grant: .*aud/);
    expect(await reason(verifyGrantAssertion(provider, await sign({ exp: NOW_S }), [ISSUER]))).toMatch(/invalid_grant: .*exp/);
    expect(await reason(verifyGrantAssertion(provider, await sign({ uid: undefined }), [ISSUER]))).toMatch(/invalid_grant: .*uid/);
  });
});
