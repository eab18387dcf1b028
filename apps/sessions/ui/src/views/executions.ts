// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** A session's executions, newest first; a row opens to its stored events. */
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { api, type ExecEvent, type Execution } from "../api.ts";
import { time } from "../format.ts";
import type { Report } from "../report.ts";

export function Executions({ sessionId, report }: { sessionId: string; report: Report }) {
  const [list, setList] = useState<Execution[]>([]);
  const [open, setOpen] = useState<Record<string, ExecEvent[]>>({});
  useEffect(() => {
    api<Execution[]>("GET", `/executions?session_id=${sessionId}&limit=100`).then(setList, report);
  }, [sessionId, report]);
  const toggle = async (x: Execution) => {
    if (open[x.id]) return setOpen(({ [x.id]: _, ...rest }) => rest);
    try {
      const events = await api<ExecEvent[]>("GET", `/executions/${x.id}/events`);
      setOpen((o) => ({ ...o, [x.id]: events }));
    } catch (err) {
      report(err);
    }
  };
  return html`<table data-testid="executions">
    <thead><tr><th>Started</th><th>Kind</th><th>Input</th><th>Status</th><th>Result</th><th>ms</th></tr></thead>
    <tbody>
      ${list.map(
        (x) => html`<tr class="clickable" onClick=${() => toggle(x)}>
            <td>${time(x.started_at)}</td><td>${x.kind}</td><td><code>${(x.input ?? x.path ?? "").slice(0, 60)}</code></td>
            <td><span class=${`status ${x.status}`}>${x.status}</span></td><td>${x.result?.preview ?? x.error?.message ?? ""}</td><td>${x.metrics?.duration_ms ?? ""}</td>
          </tr>
          ${open[x.id] && html`<tr><td colspan="6" class="events">${open[x.id]!.map((ev) => html`<div><code>#${ev.seq} ${ev.type}</code> ${JSON.stringify(ev.payload)}</div>`)}</td></tr>`}`,
      )}
    </tbody>
  </table>`;
}
