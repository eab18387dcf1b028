/**
 * Stage 4, resources (`.resource(...)`): each declared resource resolved from the path's
 * parameters, in order; one that must exist and does not is 404. A resolver's not-found error
 * and null mean the same.
 */
import type { RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import { ResourceNotFoundError, type ResourceRef, type ResourceResolver } from "../core/services.ts";
import { type Stage, stateOf } from "./state.ts";

export function resourcesStage(plan: RoutePlan, resolver: ResourceResolver): Stage {
  return async (c, next) => {
    const state = stateOf(c);
    for (const spec of plan.resources) {
      let ref: ResourceRef | null = null;
      try {
        ref = (await resolver.resolve({
          type: spec.type,
          id: spec.idParam ? state.params[spec.idParam] : undefined,
          tenantId: spec.tenantParam ? state.params[spec.tenantParam] : undefined,
          actor: state.actor,
          route: plan,
        })) ?? null;
      } catch (err) {
        if (!(err instanceof ResourceNotFoundError)) throw err;
      }
      state.resources = { ...state.resources, [spec.type]: ref };
      if (!ref && spec.mustExist) throw new HostReply(404, "NOT_FOUND", `${spec.type} not found`, {}, "resource_not_found");
    }
    await next();
  };
}
