/**
 * The authorizer the command line uses until a policy is configured: an action is allowed when
 * the actor's token grants it by name, in its `scope` (space-separated) or its `roles`,
 * `groups` or `permissions` claims, or through a wildcard grant (`notes:*` grants `notes:read`;
 * `*` grants everything). A resource with a tenant is allowed only to an actor of that tenant.
 * Everything else is denied: no actor, no grant, another tenant.
 */
import type { Actor, AuthorizationDecision, Authorizer } from "../core/services.ts";

const GRANT_CLAIMS = ["roles", "groups", "permissions"] as const;

export function grantsOf(actor: Actor): Set<string> {
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

export function scopeAuthorizer(): Authorizer {
  return {
    authorize({ actor, action, resources }): AuthorizationDecision {
      if (!actor) return { allow: false, reason: "no_actor" };
      for (const ref of Object.values(resources)) {
        if (ref && ref.tenantId && !(actor.tenantIds ?? []).includes(ref.tenantId)) return { allow: false, reason: "tenant_mismatch" };
      }
      if (!grantAllows(grantsOf(actor), action)) return { allow: false, reason: `not_granted:${action}` };
      return { allow: true };
    },
  };
}
