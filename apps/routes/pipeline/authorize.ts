/** Stage 5, authorize (routes that are not public): the authorizer decides on the actor, the
 * action and the resources (the first declared one as `resource`); a denial is 403. */
import type { RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import type { Authorizer } from "../core/services.ts";
import { type Stage, stateOf } from "./state.ts";

export function authorizeStage(plan: RoutePlan, authorizer: Authorizer): Stage {
  return async (c, next) => {
    const state = stateOf(c);
    const first = plan.resources[0] ? (state.resources[plan.resources[0].type] ?? null) : null;
    const decision = await authorizer.authorize({ actor: state.actor, action: plan.action!, resource: first, resources: state.resources, route: plan });
    if (!decision.allow) throw new HostReply(403, "FORBIDDEN", "not allowed", {}, decision.reason ?? "denied");
    await next();
  };
}
