/** /health, /runtime/summary and (beyond the spec) /runtime/memory. */
import type { ServiceContext } from "../domain/context.ts";
import type { ApiRouter } from "./api.ts";

const TAG = "operations";

export function registerRuntime(router: ApiRouter, ctx: ServiceContext): void {
  router.add(
    {
      method: "get",
      path: "/health",
      tag: TAG,
      summary: "Liveness: any answer means the daemon runs",
      response: { status: 200, description: "ok", schema: "Health" },
      errors: [],
    },
    (c) => c.json({ status: "ok" }),
  );

  router.add(
    {
      method: "get",
      path: "/runtime/summary",
      tag: TAG,
      summary: "Runtimes alive in memory now (rows of earlier processes are not counted)",
      response: { status: 200, description: "The summary", schema: "RuntimeSummary" },
      errors: [],
    },
    (c) => {
      const ids = ctx.live.liveIds();
      return c.json({ active_sessions: ids.length, active_session_ids: ids });
    },
  );

  router.add(
    {
      method: "get",
      path: "/runtime/memory",
      tag: TAG,
      summary: "The daemon process's memory: resident set (its sandbox threads included) and main heap in use; {} where the runtime does not tell (workerd)",
      response: { status: 200, description: "Bytes", schema: "RuntimeMemory" },
      errors: [],
    },
    (c) => {
      const m = ctx.memory?.();
      return c.json(m ? { rss_bytes: m.rss, heap_used_bytes: m.heapUsed } : {});
    },
  );
}
