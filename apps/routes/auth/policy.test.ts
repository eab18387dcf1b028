import { describe, expect, it } from "vitest";
import type { RoutePlan } from "../core/plan.ts";
import type { Actor, ResourceRef } from "../core/services.ts";
import { parsePolicy, policyAuthorizer, readPolicy } from "./policy.ts";

const route = { method: "GET", pattern: "/x", name: "GET /x", public: false, resources: [], csrf: false } as RoutePlan;
const POLICY = `
rules:
  - roles: [admin]
    allow: ["*"]
  - roles: [editor]
    allow: ["notes:*"]
  - roles: ["*"]
    allow: [notes:read]
`;

describe("the policy authorizer", () => {
  const decide = async (actor: Actor | null, action: string, resource: ResourceRef | null = null) =>
    policyAuthorizer(await readPolicy(POLICY, "test")).authorize({ actor, action, resource, resources: resource ? { note: resource } : {}, route });
  const user = (claims: Record<string, unknown>, tenantIds?: string[]): Actor => ({ id: "u", kind: "user", claims, tenantIds });

  it("maps roles from the roles and groups claims to actions, with wildcards", async () => {
    expect(await decide(user({ roles: ["admin"] }), "billing:refund")).toEqual({ allow: true });
    expect(await decide(user({ groups: ["editor"] }), "notes:write")).toEqual({ allow: true });
    expect(await decide(user({ groups: ["editor"] }), "billing:refund")).toEqual({
      allow: false,
      reason: "no_rule_allows:billing:refund",
      explanation:
        'no rule of the policy allows "billing:refund" to the roles [editor] (from the claims roles, groups); its rules: roles [admin] allow [*]; roles [editor] allow [notes:*]; roles [*] allow [notes:read]',
    });
    expect(await decide(user({}), "notes:read")).toEqual({ allow: true });
    expect(await decide(user({}), "notes:write")).toMatchObject({ allow: false });
  });

  it("quotes a claim that is not a plain name in the explanation, so it cannot pass for other roles or log lines", async () => {
    const forged = ["editor], roles [admin", "a\nb", "<script>"];
    expect((await decide(user({ roles: forged }), "billing:refund")).explanation).toBe(
      'no rule of the policy allows "billing:refund" to the roles ["editor], roles [admin", "a\\nb", "<script>"] (from the claims roles, groups); its rules: roles [admin] allow [*]; roles [editor] allow [notes:*]; roles [*] allow [notes:read]',
    );
    const note = { id: "n1", tenantId: 'acme" and it is yours' };
    expect((await decide(user({ roles: ["admin"] }, ["x y"]), "notes:read", note)).explanation).toBe(
      'the note n1 belongs to tenant "acme\\" and it is yours", and the actor\'s tenants are ["x y"]',
    );
  });

  it("denies without an actor, and across tenants", async () => {
    expect(await decide(null, "notes:read")).toMatchObject({ allow: false, reason: "no_actor" });
    const note = { id: "n1", tenantId: "acme" };
    expect(await decide(user({ roles: ["admin"] }, ["globex"]), "notes:read", note)).toMatchObject({ allow: false, reason: "tenant_mismatch" });
    expect(await decide(user({ roles: ["admin"], tenant: "acme" }), "notes:read", note)).toEqual({ allow: true });
    expect(await decide(user({ roles: ["admin"] }, ["acme"]), "notes:read", note)).toEqual({ allow: true });
  });

  it("reads scopes as roles when told to, and can leave tenants unchecked", async () => {
    const policy = parsePolicy({ roles: { claims: ["scope"] }, rules: [{ roles: ["notes.admin"], allow: ["notes:*"] }], tenants: { match: false } });
    const a = policyAuthorizer(policy);
    const actor = user({ scope: "openid notes.admin" }, ["other"]);
    expect(await a.authorize({ actor, action: "notes:delete", resource: null, resources: { note: { id: "n", tenantId: "acme" } }, route })).toEqual({
      allow: true,
    });
  });

  it.each([
    [{ rules: [] }, "policy at rules: needs at least one rule"],
    [{}, 'policy at rules: "rules" is required'],
    [{ rules: [{ roles: ["a"], allow: ["x"] }], extra: 1 }, 'policy at extra: unknown key "extra"'],
    [{ rules: [{ roles: ["a"], allow: ["x"], deny: ["y"] }] }, 'policy at rules.0.deny: unknown key "deny"'],
    [{ rules: [{ roles: ["a"], allow: ["notes:**"] }] }, 'policy at rules.0.allow: each action is "*", "name:name..." or "name:*"'],
    [{ rules: [{ roles: [], allow: ["x"] }] }, "policy at rules.0.roles: needs at least one entry"],
    [{ rules: [{ roles: ["a"], allow: ["x"] }], tenants: { match: "yes" } }, "policy at tenants.match: Invalid type: Expected boolean"],
  ])("refuses %j at start with where the mistake is", (doc, message) => {
    expect(() => parsePolicy(doc)).toThrow(message);
  });

  it("names the file and says when it is not YAML", async () => {
    await expect(readPolicy("rules: [", "policy file p.yaml")).rejects.toThrow(/^policy file p\.yaml: not valid YAML or JSON/);
  });
});
