/**
 * The host fails closed: a route that needs a service the host was not given answers 500, before
 * anything is decided. Composed into a route only when something it needs is missing.
 */
import type { RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import type { AuthServices } from "../core/services.ts";
import { type Stage, UNSAFE } from "./state.ts";

/** The services `plan` needs that `auth` lacks, for a request with `method`. */
export function missingServices(plan: RoutePlan, auth: AuthServices, method: string): string[] {
  const missing: string[] = [];
  if (!plan.public) {
    if (!auth.authenticator) missing.push("authenticator");
    if (!auth.authorizer) missing.push("authorizer");
    if (plan.resources.length > 0 && !auth.resources) missing.push("resource resolver");
  }
  if (plan.csrf && UNSAFE(method) && !auth.csrf) missing.push("CSRF protector");
  return missing;
}

/** Whether some request to `plan` could find a service missing (the CSRF protector: unsafe methods). */
export const mayMissServices = (plan: RoutePlan, auth: AuthServices) => missingServices(plan, auth, "POST").length > 0;

export function failClosedStage(plan: RoutePlan, auth: AuthServices): Stage {
  return async (c, next) => {
    const missing = missingServices(plan, auth, c.req.method);
    if (missing.length > 0) {
      throw new HostReply(
        500,
        "SERVICE_MISSING",
        `route ${plan.name} needs host services that are not configured: ${missing.join(", ")}`,
        {},
        "service_missing",
      );
    }
    await next();
  };
}
