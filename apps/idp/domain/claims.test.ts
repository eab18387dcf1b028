import { describe, expect, it } from "vitest";
import { LOGIN_CLAIMS_MAX_BYTES, LoginClaimsError, parseLoginClaims, userClaims } from "./claims.ts";
import { fromSeeded } from "./scenarios.ts";
import { parseSeededUsers } from "./users.ts";

const scenario = (doc: Record<string, unknown>) => fromSeeded(parseSeededUsers([doc])[0]!, "seeded");

describe("userClaims", () => {
  it("a synthetic user has sub, email, email_verified and name", () => {
    expect(userClaims({ login: "alice", sub: "s" })).toEqual({ sub: "s", email: "alice@example.test", email_verified: true, name: "alice" });
  });
  it("helpers become claims, extra claims override them, omissions apply last", () => {
    const s = scenario({
      login: "carol",
      groups: ["g"],
      tenant: "acme",
      locale: "de",
      claims: { tenant: "override", extra: 1 },
      omit_claims: ["locale", "email"],
    });
    expect(userClaims({ login: "carol", sub: "s", scenario: s })).toEqual({
      sub: "s",
      email_verified: true,
      name: "carol",
      groups: ["g"],
      tenant: "override",
      extra: 1,
    });
  });
  it("protocol claims can be neither overridden nor omitted", () => {
    const s = scenario({ login: "x", claims: { sub: "evil", iss: "evil" }, omit_claims: ["sub"] });
    const claims = userClaims({ login: "x", sub: "real", scenario: s });
    expect(claims.sub).toBe("real");
    expect(claims).not.toHaveProperty("iss");
  });
});

describe("extra claims at login", () => {
  it("parse a JSON object; blank text is none", () => {
    expect(parseLoginClaims('{"roles": ["a"], "n": {"x": [1]}}')).toEqual({ roles: ["a"], n: { x: [1] } });
    expect(parseLoginClaims(" \n")).toBeUndefined();
  });
  it("refuse what is not a small, shallow JSON object without reserved names", () => {
    const cases: [string, RegExp][] = [
      ["{", /not valid JSON/],
      ["[1]", /must be a JSON object/],
      ["42", /must be a JSON object/],
      ['{"sub": "x"}', /cannot set sub/],
      // A logout token's mark: an ID token carrying it would not pass as one (signed-jwt.ts).
      ['{"events": {}}', /cannot set events/],
      ['{"cnf": {}, "scope": "openid", "sid": "s", "act": {}}', /cannot set cnf, scope, sid, act/],
      [JSON.stringify({ a: "é".repeat(LOGIN_CLAIMS_MAX_BYTES / 2) }), /longer than 4096 bytes/],
      [`{"a":${"[".repeat(64)}${"]".repeat(64)}}`, /nested deeper than 64/],
    ];
    for (const [text, message] of cases) {
      expect(() => parseLoginClaims(text), text.slice(0, 40)).toThrow(LoginClaimsError);
      expect(() => parseLoginClaims(text), text.slice(0, 40)).toThrow(message);
    }
  });
  it("override the user's claims, the scenario's included, never the protocol's", () => {
    const s = scenario({ login: "carol", groups: ["g"], omit_claims: ["email"] });
    expect(userClaims({ login: "carol", sub: "s", scenario: s, claims: { groups: ["x"], email: "c@x.test", sub: "evil" } })).toEqual({
      sub: "s",
      email_verified: true,
      name: "carol",
      groups: ["x"],
      email: "c@x.test",
    });
    expect(userClaims({ login: "alice", sub: "s", claims: { tenant: "t" } })).toMatchObject({ email: "alice@example.test", tenant: "t" });
  });
});
