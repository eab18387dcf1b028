// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** The header's runtime line: live sessions and the daemon's memory, polled every 2 s. */
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { api, type RuntimeMemory, type RuntimeSummary } from "../api.ts";
import { mib } from "../format.ts";

export function Summary() {
  const [summary, setSummary] = useState<RuntimeSummary | null>(null);
  const [memory, setMemory] = useState<RuntimeMemory>({});
  useEffect(() => {
    let alive = true;
    const load = () =>
      Promise.all([api<RuntimeSummary>("GET", "/runtime/summary"), api<RuntimeMemory>("GET", "/runtime/memory").catch(() => ({}))]).then(
        ([s, m]) => alive && (setSummary(s), setMemory(m)),
        () => alive && setSummary(null),
      );
    void load();
    const timer = setInterval(load, 2000);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, []);
  return html`<span class="summary" data-testid="summary" title=${summary?.active_session_ids.join("\n") ?? ""}>
    ${summary ? `${summary.active_sessions} live session${summary.active_sessions === 1 ? "" : "s"}` : "runtime: …"}
    ${memory.rss_bytes !== undefined ? html` · <span data-testid="memory">daemon ${mib(memory.rss_bytes)} resident, heap ${mib(memory.heap_used_bytes ?? 0)}</span>` : ""}
  </span>`;
}
