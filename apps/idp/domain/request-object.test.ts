/** readRequestObject: signature by the client's keys or secret, `none` only when registered, iss/aud/exp/nbf, the object's parameters. */
import { beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import type { Client } from "./clients.ts";
import { readRequestObject } from "./request-object.ts";

const ISSUER = "http://idp.test";
const NOW = Date.parse("2026-06-01T00:00:00Z");
const NOW_S = NOW / 1000;

let key: CryptoKey;
let client: Client;
const base = (id: string): Client => ({ client_id: id, redirect_uris: new Set(), post_logout_redirect_uris: new Set(), require_pkce: false });

beforeAll(async () => {
  const pair = await generateKeyPair("EdDSA", { extractable: true });
  key = pair.privateKey;
  client = { ...base("app"), jwks: { keys: [await exportJWK(pair.publicKey)] } };
});

const check = (c: Client = client) => ({ client: c, isIssuer: (aud: string) => aud === ISSUER, now: NOW });
const sign = (claims: Record<string, unknown>, typ?: string) => new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", ...(typ ? { typ } : {}) }).sign(key);

describe("readRequestObject", () => {
  it("returns the object's parameters as strings (objects as JSON), without JWT claims, with the client_id", async () => {
    const params = await readRequestObject(
      await sign({ iss: "app", aud: ISSUER, exp: NOW_S + 60, scope: "openid", max_age: 0, claims: { id_token: { acr: null } } }, "oauth-authz-req+jwt"),
      check(),
    );
    expect(Object.fromEntries(params)).toEqual({ scope: "openid", max_age: "0", claims: '{"id_token":{"acr":null}}', client_id: "app" });
  });

  it("refuses iss, aud or client_id of someone else, exp passed, nbf ahead, a nested request, an unknown typ", async () => {
    const cases: [Record<string, unknown>, RegExp, string?][] = [
      [{ iss: "other" }, /iss/],
      [{ aud: "http://elsewhere.test" }, /aud/],
      [{ client_id: "other" }, /client_id/],
      [{ exp: NOW_S - 1 }, /exp/],
      [{ nbf: NOW_S + 60 }, /nbf/],
      [{ request_uri: "urn:x" }, /request_uri/],
      [{}, /typ/, "at+jwt"],
    ];
    for (const [claims, reason, typ] of cases) await expect(readRequestObject(await sign(claims, typ), check())).rejects.toThrow(reason);
  });

  it("refuses a parameter nested too deeply to serialize (invalid_request_object, not a server error)", async () => {
    const depth = 20_000;
    const deep = `{"scope":"openid","claims":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`;
    const unsigned = `${btoa('{"alg":"none"}').replace(/=+$/, "")}.${Buffer.from(deep).toString("base64url")}.`;
    const none = { ...base("app"), request_object_signing_alg: "none" };
    await expect(readRequestObject(unsigned, check(none))).rejects.toThrow(/claims is nested too deeply/);
  });

  it("takes an unsigned object only from a client that registered none, and a signed one never from it", async () => {
    const unsigned = new UnsecuredJWT({ scope: "openid" }).encode();
    await expect(readRequestObject(unsigned, check())).rejects.toThrow(/unsigned/);
    const none = { ...base("app"), request_object_signing_alg: "none" };
    expect((await readRequestObject(unsigned, check(none))).get("scope")).toBe("openid");
    await expect(readRequestObject(await sign({}), check(none))).rejects.toThrow(/none/);
  });

  it("uses the registered alg only, and the secret for HS256", async () => {
    const secret = "request-object-secret-0123456789abcdef";
    const hs = await new SignJWT({ scope: "openid" }).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(secret));
    expect((await readRequestObject(hs, check({ ...base("app"), secret }))).get("scope")).toBe("openid");
    await expect(readRequestObject(hs, check({ ...client, request_object_signing_alg: "EdDSA" }))).rejects.toThrow(/alg HS256/);
    await expect(readRequestObject(await sign({}), check({ ...client, request_object_signing_alg: "ES256" }))).rejects.toThrow(/alg EdDSA/);
  });
});
