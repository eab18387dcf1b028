import { describe, expect, it } from "vitest";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from "jose";
import { DpopError, htuForm, verifyDpopProof } from "./dpop.ts";
import { sha256Base64url } from "./jose.ts";

const NOW = Date.parse("2026-11-22T07:00:00Z");
const URL_ = "http://127.0.0.1:5556/token";

async function key(alg: "ES256" | "RS256") {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, privateKey, jwk: await exportJWK(publicKey), priv: await exportJWK(privateKey) };
}

async function proof(k: Awaited<ReturnType<typeof key>>, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
  return new SignJWT({ jti: "j1", htm: "POST", htu: URL_, iat: Math.floor(NOW / 1000), ...claims })
    .setProtectedHeader({ alg: k.alg, typ: "dpop+jwt", jwk: k.jwk, ...header })
    .sign(k.privateKey);
}

describe("verifyDpopProof", () => {
  it("accepts ES256 and RS256 proofs and returns the key thumbprint", async () => {
    for (const alg of ["ES256", "RS256"] as const) {
      const k = await key(alg);
      const verified = await verifyDpopProof(await proof(k, { htu: URL_ + "?q=1#f" }), { method: "POST", urls: [URL_], now: NOW });
      expect(verified.jkt).toBe(await calculateJwkThumbprint(k.jwk));
      expect(verified.jti).toBe("j1");
    }
  });
  it("checks ath against the access token", async () => {
    const k = await key("ES256");
    const ath = await sha256Base64url("token-1");
    const p = await proof(k, { htm: "GET", ath });
    await expect(verifyDpopProof(p, { method: "GET", urls: [URL_], now: NOW, accessToken: "token-1" })).resolves.toBeTruthy();
    await expect(verifyDpopProof(p, { method: "GET", urls: [URL_], now: NOW, accessToken: "token-2" })).rejects.toThrow(/ath/);
    await expect(verifyDpopProof(await proof(k, { htm: "GET" }), { method: "GET", urls: [URL_], now: NOW, accessToken: "t" })).rejects.toThrow(/ath/);
  });
  it("rejects wrong typ, method, URL, stale or future iat, missing jti and private keys", async () => {
    const k = await key("ES256");
    const expect_ = { method: "POST", urls: [URL_], now: NOW };
    const cases: Promise<string>[] = [
      proof(k, {}, { typ: "JWT" }),
      proof(k, { htm: "GET" }),
      proof(k, { htu: "http://127.0.0.1:5556/other" }),
      proof(k, { iat: Math.floor(NOW / 1000) - 301 }),
      proof(k, { iat: Math.floor(NOW / 1000) + 301 }),
      proof(k, { jti: undefined }),
      proof(k, {}, { jwk: k.priv }),
      Promise.resolve("not.a.jwt"),
    ];
    for (const p of cases) await expect(verifyDpopProof(await p, expect_)).rejects.toBeInstanceOf(DpopError);
  });
  it("compares htu without query and fragment", () => {
    expect(htuForm("http://a.test:1/x?y#z")).toBe("http://a.test:1/x");
    expect(htuForm("not a url")).toBeUndefined();
  });
});
