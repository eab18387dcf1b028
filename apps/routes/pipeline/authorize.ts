/** Stage 5, authorize (routes that are not public): the authorizer decides on the actor, the
 * action and the resources (the first declared one as `resource`); a denial is 403. */
import type { RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import type { Authorizer } from "../core/services.ts";
import { type Stage, type StageDeps, stateOf } from "./state.ts";

export function authorizeStage(plan: RoutePlan, authorizer: Authorizer, deps: Pick<StageDeps, "dev" | "log"> = { dev: false }): Stage {
  return async (c, next) => {
    const state = stateOf(c);
    const first = plan.resources[0] ? (state.resources[plan.resources[0].type] ?? null) : null;
    const decision = await authorizer.authorize({ actor: state.actor, action: plan.action!, resource: first, resources: state.resources, route: plan });
    if (!decision.allow) {
      const reason = decision.reason ?? "denied";
      // Why, for whoever runs the host: always in the log, on the answer only in dev mode.
      const why = `action "${plan.action}" refused (${reason}): ${decision.explanation ?? "the authorizer said no"}`;
      deps.log?.info("authorization denied", { request_id: state.requestId, route: plan.name, action: plan.action, reason, why });
      throw new HostReply(403, "FORBIDDEN", deps.dev ? `not allowed: ${why}` : "not allowed", {}, reason);
    }
    await next();
  };
}
