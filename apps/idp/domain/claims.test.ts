import { describe, expect, it } from "vitest";
import { userClaims } from "./claims.ts";
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
