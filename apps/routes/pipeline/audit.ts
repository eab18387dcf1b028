/**
 * `.audit(event)`: one record per outcome. `allowed` when authorization passed (the handler stage
 * records it), then `completed` or `failed`; `denied` with the reason when a stage refused; `failed`
 * (`host_error`) when a service failed before anything was decided. Every
 * write is awaited before the response leaves, so an event is stored when the client sees the
 * outcome (and a Worker does not drop it after responding).
 */
import type { RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import type { AuditEvent, AuditOutcome, AuditSink } from "../core/services.ts";
import { type Stage, type StageDeps, stateOf } from "./state.ts";

export function auditStage(plan: RoutePlan & { audit: string }, sink: AuditSink, deps: Pick<StageDeps, "now" | "log">): Stage {
  return async (c, next) => {
    const state = stateOf(c);
    const method = c.req.method;
    const writes: Promise<void>[] = [];
    state.audit = (outcome: AuditOutcome, extra: Partial<AuditEvent> = {}) => {
      const first = plan.resources[0] ? state.resources[plan.resources[0].type] : undefined;
      const event: AuditEvent = {
        event: plan.audit,
        outcome,
        routeName: plan.name,
        method,
        pattern: plan.pattern,
        requestId: state.requestId,
        at: deps.now().toISOString(),
        ...(plan.action !== undefined ? { action: plan.action } : {}),
        ...(state.actor ? { actor: state.actor } : {}),
        ...(first ? { resource: first } : {}),
        ...(plan.resources.length > 0 ? { resources: state.resources } : {}),
        ...extra,
      };
      writes.push(
        (async () => {
          try {
            await sink.record(event);
          } catch (err) {
            deps.log?.error("audit sink failed", { request_id: state.requestId, error: String(err) });
          }
        })(),
      );
    };
    await next();
    const statusCode = c.res.status;
    if (c.error instanceof HostReply && c.error.auditReason) state.audit("denied", { reason: c.error.auditReason, statusCode });
    else if (!state.allowed) {
      // Answered before authorization: a stage's own answer (a sign-in redirect), or a service
      // that failed before anything was decided (its database down), the host's error.
      if (state.deniedWith && !c.error) state.audit("denied", { reason: state.deniedWith, statusCode });
      else if (c.error) state.audit("failed", { statusCode, reason: "host_error" });
    } else if (c.error || statusCode >= 500) state.audit("failed", { statusCode, reason: "handler_error" });
    else state.audit("completed", { statusCode });
    await Promise.all(writes);
  };
}
