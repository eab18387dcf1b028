/** /health, /runtime/summary and (beyond the spec) /runtime/memory. */
import type { Hono } from "hono";
import type { ServiceContext } from "../domain/context.ts";
import { describe, noQuery } from "./api.ts";
import { HealthSchema, RuntimeMemorySchema, RuntimeSummarySchema } from "./schemas.ts";

const TAG = "operations";

export function registerRuntime(routes: Hono, ctx: ServiceContext): void {
  routes.get(
    "/health",
    describe({
      tag: TAG,
      summary: "Liveness: any answer means the daemon runs",
      response: { status: 200, description: "ok", schema: HealthSchema },
      errors: [],
    }),
    noQuery,
    (c) => c.json({ status: "ok" }),
  );

  routes.get(
    "/runtime/summary",
    describe({
      tag: TAG,
      summary: "Runtimes alive in memory now (rows of earlier processes are not counted)",
      response: { status: 200, description: "The summary", schema: RuntimeSummarySchema },
      errors: [],
    }),
    noQuery,
    (c) => {
      const ids = ctx.live.liveIds();
      return c.json({ active_sessions: ids.length, active_session_ids: ids });
    },
  );

  routes.get(
    "/runtime/memory",
    describe({
      tag: TAG,
      summary: "The daemon process's memory: resident set (its sandbox threads included) and main heap in use; {} where the runtime does not tell (workerd)",
      response: { status: 200, description: "Bytes", schema: RuntimeMemorySchema },
      errors: [],
    }),
    noQuery,
    (c) => {
      const m = ctx.memory?.();
      return c.json(m ? { rss_bytes: m.rss, heap_used_bytes: m.heapUsed } : {});
    },
  );
}
