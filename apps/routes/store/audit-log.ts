/** An AuditSink that writes each event as one structured log line (`audit` at info level). */
import type { Logger } from "#lib/log";
import type { AuditEvent, AuditSink } from "../core/services.ts";

export function logAuditSink(logger: Logger): AuditSink {
  return {
    record(event: AuditEvent) {
      const { actor, ...rest } = event;
      logger.info("audit", { ...rest, actor: actor ? { id: actor.id, kind: actor.kind } : undefined });
    },
  };
}
