/**
 * A planned route's stages, chosen once from its plan when it is registered: a public route runs
 * only the request, body and handler stages; the others add what the plan declares, in the
 * order the spec gives:
 *
 *   request -> [audit] -> [rate limit by ip (429)] -> body (400/413) -> [fail closed (500)]
 *   -> [authenticate (401)] -> [rate limit by actor, token, session (429)]
 *   -> [CSRF on unsafe methods (403)] -> [resources (404)] -> [authorize (403)] -> handler
 */
import type { RoutePlan } from "../core/plan.ts";
import { memoryRateLimitStore } from "../store/rate-limits.ts";
import type { ScriptRuntime } from "../script/runtime.ts";
import { auditStage } from "./audit.ts";
import { authenticateStage } from "./authenticate.ts";
import { authorizeStage } from "./authorize.ts";
import { bodyStage } from "./body.ts";
import { csrfStage } from "./csrf.ts";
import { failClosedStage, mayMissServices } from "./fail-closed.ts";
import { handlerStage, type Target } from "./handler.ts";
import { countsBeforeAuthentication, rateLimitStage } from "./rate-limit.ts";
import { requestStage } from "./request.ts";
import { resourcesStage } from "./resources.ts";
import type { Stage, StageDeps } from "./state.ts";

export function stagesFor(plan: RoutePlan, target: Target, deps: StageDeps & { runtime?: ScriptRuntime }): Stage[] {
  const { auth } = deps;
  const stages: Stage[] = [requestStage(plan, deps)];
  if (plan.audit !== undefined && auth.audit) stages.push(auditStage({ ...plan, audit: plan.audit }, auth.audit, deps));
  const limits = plan.rateLimits ?? [];
  const byAddress = limits.filter(countsBeforeAuthentication);
  const byCredential = limits.filter((l) => !countsBeforeAuthentication(l));
  const rateLimits = { store: deps.rateLimits ?? memoryRateLimitStore(), now: deps.now };
  // Before the body: a flood from one address costs no parsing and no token checks.
  if (byAddress.length > 0) stages.push(rateLimitStage(plan, byAddress, rateLimits));
  stages.push(bodyStage(deps));
  // Past this point every service the plan needs exists (or the request has been refused).
  if (mayMissServices(plan, auth)) stages.push(failClosedStage(plan, auth));
  if (!plan.public && auth.authenticator) stages.push(authenticateStage(plan, auth.authenticator));
  if (byCredential.length > 0) stages.push(rateLimitStage(plan, byCredential, rateLimits));
  if (plan.csrf && auth.csrf) stages.push(csrfStage(auth.csrf));
  if (plan.resources.length > 0 && auth.resources) stages.push(resourcesStage(plan, auth.resources));
  if (!plan.public && auth.authorizer) stages.push(authorizeStage(plan, auth.authorizer, deps));
  stages.push(handlerStage(plan, target, deps));
  return stages;
}
