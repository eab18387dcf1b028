/**
 * The policy authorizer: which actions an actor may perform comes from a declarative policy file
 * (YAML or JSON), checked when the host starts. Default deny.
 *
 *   roles:                         # where an actor's roles come from (default below)
 *     claims: [roles, groups]      # string or list-of-strings claims; "scope" is split on spaces
 *   rules:                         # an actor with one of `roles` may perform the `allow`ed actions
 *     - roles: [admin]
 *       allow: ["*"]
 *     - roles: [editor]
 *       allow: ["notes:*"]         # `notes:read`, `notes:write`, ...
 *     - roles: ["*"]               # any authenticated actor
 *       allow: [notes:read]
 *   tenants:                       # resources with a tenant (default below)
 *     match: true                  # the actor must belong to the resource's tenant
 *     claims: [tenant_ids, tenants, tenant]
 *
 * An unknown key, a rule without roles or actions, or an action pattern that is not `*`,
 * `name:name...` or `name:*` is refused with the path of the mistake.
 */
import * as v from "valibot";
import { parseYaml } from "#lib/config";
import { CodedError } from "#lib/errors";
import type { Actor, AuthorizationDecision, Authorizer } from "../core/services.ts";
import { grantAllows, listed, NO_ACTOR, tenantDenial } from "./scope-authorizer.ts";

const ACTION_PATTERN = /^(?:\*|[A-Za-z0-9_.-]+(?::[A-Za-z0-9_.-]+)*(?::\*)?)$/;
const name = v.pipe(v.string(), v.minLength(1, "must not be empty"));
const nameList = v.pipe(v.array(name), v.minLength(1, "needs at least one entry"));

const PolicySchema = v.strictObject({
  roles: v.optional(v.strictObject({ claims: nameList }), { claims: ["roles", "groups"] }),
  rules: v.pipe(
    v.array(
      v.strictObject({
        roles: nameList,
        allow: v.pipe(nameList, v.check((list) => list.every((a) => ACTION_PATTERN.test(a)), 'each action is "*", "name:name..." or "name:*"')),
      }),
    ),
    v.minLength(1, "needs at least one rule (everything is denied otherwise)"),
  ),
  tenants: v.optional(v.strictObject({ match: v.optional(v.boolean(), true), claims: v.optional(nameList, ["tenant_ids", "tenants", "tenant"]) }), {
    match: true,
    claims: ["tenant_ids", "tenants", "tenant"],
  }),
});

export type Policy = v.InferOutput<typeof PolicySchema>;

export type PolicyErrorCode = "INVALID_POLICY";

export class PolicyError extends CodedError<PolicyErrorCode> {
  constructor(message: string) {
    super("INVALID_POLICY", message);
  }
}

/** Validates a parsed policy document; PolicyError names the first mistake and where it is. */
export function parsePolicy(doc: unknown): Policy {
  const checked = v.safeParse(PolicySchema, doc);
  if (checked.success) return checked.output;
  const issue = checked.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
  const key = JSON.stringify(String(issue.path?.at(-1)?.key));
  const message = issue.type !== "strict_object" ? issue.message : issue.expected === "never" ? `unknown key ${key}` : `${key} is required`;
  throw new PolicyError(`policy${path ? ` at ${path}` : ""}: ${message}`);
}

/** Reads a policy file's text (YAML or JSON). */
export async function readPolicy(text: string, where: string): Promise<Policy> {
  let doc: unknown;
  try {
    doc = await parseYaml(text);
  } catch (err) {
    throw new PolicyError(`${where}: not valid YAML or JSON: ${(err as Error).message.split("\n")[0]}`);
  }
  try {
    return parsePolicy(doc);
  } catch (err) {
    throw new PolicyError(`${where}: ${(err as Error).message}`);
  }
}

function claimStrings(claims: Record<string, unknown>, names: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const n of names) {
    const value = claims[n];
    if (typeof value === "string") { for (const part of n === "scope" ? value.split(" ") : [value]) if (part) out.add(part); }
    if (Array.isArray(value)) { for (const item of value) if (typeof item === "string") out.add(item); }
  }
  return out;
}

export function policyAuthorizer(policy: Policy): Authorizer {
  const tenantsOf = (actor: Actor) => new Set([...(actor.tenantIds ?? []), ...claimStrings(actor.claims ?? {}, policy.tenants.claims)]);
  return {
    authorize({ actor, action, resources }): AuthorizationDecision {
      if (!actor) return NO_ACTOR;
      if (policy.tenants.match) {
        const tenants = tenantsOf(actor);
        for (const [type, ref] of Object.entries(resources)) {
          if (ref && ref.tenantId && !tenants.has(ref.tenantId)) return tenantDenial(type, ref, tenants);
        }
      }
      const roles = claimStrings(actor.claims ?? {}, policy.roles.claims);
      for (const rule of policy.rules) {
        if (!rule.roles.some((r) => r === "*" || roles.has(r))) continue;
        if (grantAllows(new Set(rule.allow), action)) return { allow: true };
      }
      const rules = policy.rules.map((r) => `roles ${listed(r.roles)} allow ${listed(r.allow)}`).join("; ");
      return {
        allow: false,
        reason: `no_rule_allows:${action}`,
        explanation: `no rule of the policy allows "${action}" to the roles ${listed(roles)} (from the claims ${
          policy.roles.claims.join(", ")
        }); its rules: ${rules}`,
      };
    },
  };
}
