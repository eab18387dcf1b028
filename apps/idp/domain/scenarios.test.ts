import { describe, expect, it } from "vitest";
import { BUILTIN_SCENARIOS, CATEGORIES, fromSeeded, ScenarioRegistry } from "./scenarios.ts";
import { parseSeededUsers } from "./users.ts";

describe("scenario registry", () => {
  it("has every builtin scenario of docs/idp.md#users-and-scenarios", () => {
    const logins = BUILTIN_SCENARIOS.map((s) => s.login);
    for (
      const login of [
        "alice",
        "bob",
        "admin",
        "viewer",
        "no-groups",
        "many-groups",
        "tenant-a-admin",
        "tenant-b-viewer",
        "unicode-name",
        "no-email",
        "unverified-email",
        "fail-access-denied",
        "fail-login-required",
        "fail-consent-required",
        "fail-server-error",
        "token-invalid-grant",
        "token-server-error",
        "token-slow",
        "id-expired",
        "id-wrong-aud",
        "id-wrong-iss",
        "id-missing-email",
        "id-email-unverified",
        "id-bad-nonce",
        "id-future-iat",
        "userinfo-401",
        "userinfo-500",
        "userinfo-sub-mismatch",
        "key-rotated",
        "kid-not-found",
        "bad-signature",
      ]
    ) expect(logins).toContain(login);
  });
  it("groups builtin categories first, in a fixed order, then seeded categories by first appearance", () => {
    const registry = new ScenarioRegistry();
    for (const u of parseSeededUsers([{ login: "zed", category: "Zeta" }, { login: "amy" }, { login: "alice", category: "Zeta" }])) {
      registry.register(fromSeeded(u, "seeded"));
    }
    const groups = registry.groups().map((g) => g.category);
    expect(groups.slice(0, 7)).toEqual(Object.values(CATEGORIES));
    expect(groups.slice(7)).toEqual(["Zeta", "Seeded users"]);
    // A seeded user replaces the builtin of the same login, and moves to its category.
    const zeta = registry.groups().find((g) => g.category === "Zeta")!.scenarios.map((s) => s.login);
    expect(zeta).toEqual(["zed", "alice"]);
    expect(registry.groups()[0]!.scenarios.map((s) => s.login)).toEqual(["bob"]);
    expect(registry.get("alice")!.source).toBe("seeded");
  });
});
