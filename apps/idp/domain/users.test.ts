import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { UsersDocumentError } from "./errors.ts";
import { normalizeLogin, parseSeededUsers, syntheticEmail, syntheticName, syntheticSub } from "./users.ts";

describe("synthetic users", () => {
  it("alice is user-NfTfZYYJ1idFA58J4RDISA (docs/idp.md#users-and-scenarios)", async () => {
    expect(await syntheticSub("alice")).toBe("user-NfTfZYYJ1idFA58J4RDISA");
  });
  it("subjects are deterministic and differ per login", async () => {
    expect(await syntheticSub("bob")).toBe(await syntheticSub("bob"));
    expect(await syntheticSub("bob")).not.toBe(await syntheticSub("alice"));
    expect(await syntheticSub("bob")).toMatch(/^user-[A-Za-z0-9_-]{22}$/);
  });
  it("email and name derive from the login", () => {
    expect(normalizeLogin("  Alice ")).toBe("alice");
    expect(syntheticEmail("alice")).toBe("alice@example.test");
    expect(syntheticEmail("zoe@example.org")).toBe("zoe@example.org");
    expect(syntheticName("zoe.q@example.org")).toBe("zoe.q");
    expect(syntheticName("alice")).toBe("alice");
  });
});

describe("parseSeededUsers", () => {
  it("reads every field, both email_verified spellings, and trims lists", () => {
    const users = parseSeededUsers(
      parse(`users:
  - login: " Carol "
    sub: fixed-1
    email: carol@corp.test
    name: Carol
    password: pw
    email_verified: true
    groups: [eng, "  ", " ops "]
    roles: [" ", editor]
    tenant: acme
    preferred_username: carol.s
    locale: de-DE
    claims: {department: R&D}
    omit_claims: [locale]
    category: QA
  - login: dave
    email-verified: false
`),
    );
    expect(users[0]).toEqual({
      login: "carol",
      sub: "fixed-1",
      email: "carol@corp.test",
      name: "Carol",
      password: "pw",
      email_verified: true,
      groups: ["eng", "ops"],
      roles: ["editor"],
      tenant: "acme",
      preferred_username: "carol.s",
      locale: "de-DE",
      claims: { department: "R&D" },
      omit_claims: ["locale"],
      category: "QA",
    });
    expect(users[1]).toMatchObject({ login: "dave", email_verified: false, category: "Seeded users" });
    expect(users[1]).not.toHaveProperty("password");
  });
  it("accepts a bare list and an empty document", () => {
    expect(parseSeededUsers([{ login: "x" }]).map((u) => u.login)).toEqual(["x"]);
    expect(parseSeededUsers(null)).toEqual([]);
    expect(parseSeededUsers({ users: [] })).toEqual([]);
  });
  it("an empty password means any password is accepted", () => {
    expect(parseSeededUsers([{ login: "x", password: "" }])[0]).not.toHaveProperty("password");
  });
  it("throws a typed error that names the bad entry and field", () => {
    const fail = (doc: unknown) => {
      try {
        parseSeededUsers(doc);
      } catch (err) {
        expect(err).toBeInstanceOf(UsersDocumentError);
        return (err as Error).message;
      }
      throw new Error("expected an error");
    };
    expect(fail({ users: [{ login: "a" }, { login: "b", groups: "admins" }] })).toMatch(/users\[1\]\.groups/);
    expect(fail({ users: [{ name: "no login" }] })).toMatch(/users\[0\].*login/);
    expect(fail({ users: [{ login: "a", colour: "red" }] })).toMatch(/colour/);
    expect(fail({ users: [{ login: "A" }, { login: "a " }] })).toMatch(/duplicate login "a"/);
    expect(fail({ people: [] })).toMatch(/users/);
    expect(fail([{ login: "a", claims: ["x"] }])).toMatch(/claims/);
    expect(fail({ users: [{ login: "a", email_verified: true, "email-verified": false }] })).toMatch(/disagree/);
  });
});
