/**
 * The authorizer the command line uses until a policy is configured: an action is allowed when
 * the actor's token grants it by name, in its `scope` (space-separated) or its `roles`,
 * `groups` or `permissions` claims, or through a wildcard grant (`notes:*` grants `notes:read`;
 * `*` grants everything). A resource with a tenant is allowed only to an actor of that tenant.
 * Everything else is denied: no actor, no grant, another tenant.
 */
import type { Actor, AuthorizationDecision, Authorizer, ResourceRef } from "../core/services.ts";

const GRANT_CLAIMS = ["roles", "groups", "permissions"] as const;

function grantsOf(actor: Actor): Set<string> {
  const claims = actor.claims ?? {};
  const grants = new Set<string>();
  if (typeof claims.scope === "string") { for (const s of claims.scope.split(" ")) if (s) grants.add(s); }
  for (const name of GRANT_CLAIMS) {
    const value = claims[name];
    if (Array.isArray(value)) { for (const v of value) if (typeof v === "string") grants.add(v); }
  }
  return grants;
}

export function grantAllows(grants: Set<string>, action: string): boolean {
  if (grants.has(action) || grants.has("*")) return true;
  const parts = action.split(":");
  for (let i = parts.length - 1; i > 0; i--) if (grants.has(`${parts.slice(0, i).join(":")}:*`)) return true;
  return false;
}

/** A name as it is when it is plain, else quoted: a claim is whatever the token holds, and a role
 * named `user], roles [admin` or holding a line break must not read as other roles or log lines. */
const PLAIN_NAME = /^[\w.:*@+/-]+$/;
const shown = (value: string): string => (PLAIN_NAME.test(value) ? value : JSON.stringify(value));

/** `["a", "b c"]` as `[a, "b c"]`, for explanations. */
export const listed = (values: Iterable<string>): string => `[${[...values].map(shown).join(", ")}]`;

/** What a grant claim held, for explanations: `scope "openid profile"`, `roles [user]`, `groups (none)`. */
function claimShown(claims: Record<string, unknown>, name: string): string {
  const value = claims[name];
  if (typeof value === "string") return `${name} ${JSON.stringify(value)}`;
  if (Array.isArray(value)) return `${name} ${listed(value.filter((v): v is string => typeof v === "string"))}`;
  return `${name} (none)`;
}

/** The denial of a tenant's resource to an actor of other tenants, explained. */
export function tenantDenial(type: string, ref: ResourceRef, tenants: Iterable<string>): AuthorizationDecision {
  return {
    allow: false,
    reason: "tenant_mismatch",
    explanation: `the ${type} ${ref.id} belongs to tenant ${JSON.stringify(ref.tenantId)}, and the actor's tenants are ${listed(tenants)}`,
  };
}

export const NO_ACTOR: AuthorizationDecision = { allow: false, reason: "no_actor", explanation: "no one is signed in (no actor)" };

export function scopeAuthorizer(): Authorizer {
  return {
    authorize({ actor, action, resources }): AuthorizationDecision {
      if (!actor) return NO_ACTOR;
      for (const [type, ref] of Object.entries(resources)) {
        if (ref && ref.tenantId && !(actor.tenantIds ?? []).includes(ref.tenantId)) return tenantDenial(type, ref, actor.tenantIds ?? []);
      }
      if (!grantAllows(grantsOf(actor), action)) {
        const claims = actor.claims ?? {};
        return {
          allow: false,
          reason: `not_granted:${action}`,
          explanation: `no policy is loaded (--policy-file), so the token itself must grant "${action}" (or "${action.split(":")[0]}:*", or "*"), and its ${
            ["scope", ...GRANT_CLAIMS].map((n) => claimShown(claims, n)).join(", ")
          } do not`,
        };
      }
      return { allow: true };
    },
  };
}
