/** verifyOwnJwt / verifyOwnIdToken: only what this provider's key ring signed, of the kind, issuer and audience asked for. */
import { beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { SIGNING_ALGS } from "./algorithms.ts";
import { ACTIVE_KID, type KeyRing, loadKeyRing, ROTATED_KID } from "./keys.ts";
import { verifyOwnIdToken, verifyOwnJwt } from "./signed-jwt.ts";

const ISSUER = "http://idp.test";
const NOW_S = Math.floor(Date.parse("2026-01-01T00:00:00Z") / 1000);
const ID_CLAIMS = { iss: ISSUER, sub: "user-1", aud: "dev-client", iat: NOW_S, exp: NOW_S + 3600 };

let ring: KeyRing;

beforeAll(async () => {
  ring = await loadKeyRing({ stored: {}, save: async (_kid, jwk) => jwk });
});

const reasonOf = async (token: string, audience?: string) => {
  const result = await verifyOwnIdToken(ring, token, { issuer: ISSUER, audience });
  return result.ok ? "ok" : result.reason;
};

describe("verifyOwnIdToken", () => {
  it("accepts an ID token of the ring, for its issuer and audience", async () => {
    const result = await verifyOwnIdToken(ring, await ring.sign(ID_CLAIMS), { issuer: ISSUER, audience: "dev-client" });
    expect(result.ok && result.payload.sub).toBe("user-1");
  });

  it("accepts one signed with the published rotated key", async () => {
    expect(await reasonOf(await ring.sign(ID_CLAIMS, "rotated"))).toBe("ok");
  });

  it("accepts an expired one unless a time is given", async () => {
    const expired = await ring.sign({ ...ID_CLAIMS, iat: NOW_S - 7200, exp: NOW_S - 3600 });
    expect(await reasonOf(expired)).toBe("ok");
    const enforced = await verifyOwnIdToken(ring, expired, { issuer: ISSUER, now: NOW_S * 1000 });
    expect(enforced.ok).toBe(false);
  });

  it("refuses an unsigned token, alg none and a token signed by another key", async () => {
    const payload = btoa(JSON.stringify(ID_CLAIMS)).replace(/=+$/, "");
    expect(await reasonOf(`${btoa(JSON.stringify({ alg: "RS256", typ: "JWT", kid: "dev-key-1" }))}.${payload}.`)).not.toBe("ok");
    expect(await reasonOf(new UnsecuredJWT(ID_CLAIMS).encode())).not.toBe("ok");
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT(ID_CLAIMS).setProtectedHeader({ alg: "RS256", typ: "JWT", kid: "dev-key-1" }).sign(privateKey);
    expect(await reasonOf(forged)).toMatch(/signature/);
  });

  it("refuses the bad-signature and unknown-kid scenarios' tokens", async () => {
    expect(await reasonOf(await ring.sign(ID_CLAIMS, "bad-signature"))).not.toBe("ok");
    expect(await reasonOf(await ring.sign(ID_CLAIMS, "kid-not-found"))).not.toBe("ok");
  });

  it("bad-signature fails on the signature for every algorithm: the kid names a published key of that algorithm", async () => {
    const published = JSON.parse(ring.jwksBody) as { keys: { kid: string; alg: string }[] };
    for (const alg of SIGNING_ALGS) {
      const token = await ring.sign(ID_CLAIMS, "bad-signature", "JWT", alg);
      const { kid } = JSON.parse(atob(token.split(".")[0]!.replace(/-/g, "+").replace(/_/g, "/"))) as { kid: string };
      expect(published.keys.find((k) => k.kid === kid)?.alg, alg).toBe(alg);
      expect(await reasonOf(token), alg).toMatch(/signature/);
    }
  });

  it("refuses another issuer, another audience, another typ, a logout token and no subject", async () => {
    expect(await reasonOf(await ring.sign({ ...ID_CLAIMS, iss: `${ISSUER}/other` }))).toMatch(/iss/);
    expect(await reasonOf(await ring.sign(ID_CLAIMS), "web-app")).toMatch(/aud/);
    expect(await reasonOf(await ring.sign(ID_CLAIMS, undefined, "at+jwt"))).toMatch(/typ/);
    expect(await reasonOf(await ring.sign(ID_CLAIMS, undefined, "logout+jwt"))).toMatch(/typ/);
    expect(await reasonOf(await ring.sign({ ...ID_CLAIMS, events: { "http://schemas.openid.net/event/backchannel-logout": {} } }))).toMatch(
      /not an ID token \(it has events\)/,
    );
    const { sub: _sub, ...noSub } = ID_CLAIMS;
    expect(await reasonOf(await ring.sign(noSub))).toMatch(/subject/);
  });
});

describe("verifyOwnJwt", () => {
  it("checks the typ asked for", async () => {
    const token = await ring.sign({ iss: ISSUER, sub: "x" }, undefined, "at+jwt");
    expect((await verifyOwnJwt(ring, token, { issuer: ISSUER, typ: "at+jwt" })).ok).toBe(true);
    expect((await verifyOwnJwt(ring, token, { issuer: ISSUER, typ: "JWT" })).ok).toBe(false);
  });

  it("a new ring (a rotation) does not verify what the old one signed with dev-key-1", async () => {
    const other = await loadKeyRing({ stored: {}, save: async (_kid, jwk) => jwk });
    const result = await verifyOwnJwt(other, await ring.sign(ID_CLAIMS), { issuer: ISSUER, typ: "JWT" });
    expect(result.ok).toBe(false);
  });

  it("verifies ID tokens of every signing algorithm, each under its own kid; refuses one without exp (a signed userinfo response)", async () => {
    for (const alg of SIGNING_ALGS) {
      const token = await ring.sign(ID_CLAIMS, undefined, undefined, alg);
      const result = await verifyOwnIdToken(ring, token, { issuer: ISSUER, audience: "dev-client" });
      expect(result.ok && result.header, alg).toMatchObject({ alg, kid: ACTIVE_KID[alg] });
      const rotated = await verifyOwnIdToken(ring, await ring.sign(ID_CLAIMS, "rotated", undefined, alg), { issuer: ISSUER });
      expect(rotated.ok && rotated.header.kid, alg).toBe(ROTATED_KID[alg]);
    }
    const { exp: _, ...noExp } = ID_CLAIMS;
    expect(await reasonOf(await ring.sign(noExp, undefined, undefined, "ES256"))).toMatch(/no exp/);
  });
});
