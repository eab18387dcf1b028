// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** `#/sessions/<id>`: a session's REPL console (long executions followed live) and its executions tab. */
import { html } from "htm/preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure, followEvents, type ExecEvent, type Execution, type Session } from "../api.ts";
import type { ReplInput } from "../editor.ts";
import { short } from "../format.ts";
import { InputHistory } from "../history.ts";
import type { Report } from "../report.ts";
import { Executions } from "./executions.ts";

/** One execution as the console shows it: its events as they arrive, then its outcome (or a
 * `note` of the console's own, such as a restart). */
interface Entry {
  key: string;
  note?: string;
  input: string;
  executionId?: string;
  events: ExecEvent[];
  final?: Execution;
  failure?: ApiFailure;
}

function EventLine({ e }: { e: ExecEvent }) {
  const p = e.payload;
  switch (e.type) {
    case "input_echo":
      return null;
    case "console":
      return html`<div class=${`line console lvl-${String(p.level)}`}><span class="tag">${String(p.level)}</span>${String(p.text)}</div>`;
    case "value":
      return html`<div class="line value"><span class="tag">${String(p.type)}</span><span data-testid="value">${String(p.preview)}</span></div>`;
    case "exception":
      return html`<div class="line exception"><span class="tag">exception</span>${String(p.message)}${p.stack ? html`<pre>${String(p.stack)}</pre>` : ""}</div>`;
    case "system":
      return html`<div class=${`line system lvl-${String(p.level)}`}><span class="tag">system</span>${String(p.message)}</div>`;
    default:
      return html`<div class="line"><span class="tag">${e.type}</span>${JSON.stringify(p)}</div>`;
  }
}

function Outcome({ entry }: { entry: Entry }) {
  if (entry.failure) return html`<div class="line failure"><code>${entry.failure.code}</code> ${entry.failure.message}</div>`;
  const x = entry.final;
  if (!x) return html`<div class="line running">running…</div>`;
  const ms = x.metrics ? ` · ${x.metrics.duration_ms} ms` : "";
  if (x.status === "timeout") return html`<div class="line outcome timeout" data-testid="outcome">timeout: ${x.error?.message}${ms}</div>`;
  if (x.status === "limit_exceeded") return html`<div class="line outcome limit" data-testid="outcome">limit exceeded (${x.error?.limit}): ${x.error?.message}</div>`;
  if (x.status === "error") return html`<div class="line outcome error" data-testid="outcome">error${ms}</div>`;
  if (x.status === "cancelled") return html`<div class="line outcome cancelled" data-testid="outcome">cancelled${ms}</div>`;
  return html`<div class="line outcome ok muted" data-testid="outcome">${x.status}${ms}</div>`;
}

export function Console({ id, report }: { id: string; report: Report }) {
  const [session, setSession] = useState<Session | null>(null);
  const [entries, setEntries] = useState<Entry[]>([]);
  const [busy, setBusy] = useState(false);
  const [tab, setTab] = useState<"console" | "executions">("console");
  const inputHost = useRef<HTMLDivElement>(null);
  const input = useRef<ReplInput | null>(null);
  const hist = useRef(new InputHistory());
  const log = useRef<HTMLDivElement>(null);
  const update = (key: string, change: (e: Entry) => Entry) => setEntries((all) => all.map((e) => (e.key === key ? change(e) : e)));

  useEffect(() => {
    api<Session>("GET", `/sessions/${id}`).then(setSession, report);
  }, [id, report]);

  const run = useCallback(
    async (code: string) => {
      if (busy) return;
      setBusy(true);
      hist.current.add(code);
      input.current?.set("");
      const key = crypto.randomUUID();
      setEntries((all) => [...all, { key, input: code, events: [] }]);
      // The newest execution before this one, to tell ours apart once it is listed.
      let before: string | undefined;
      try {
        before = (await api<Execution[]>("GET", `/executions?session_id=${id}&limit=1`))[0]?.id;
      } catch {
        before = undefined;
      }
      let stop: (() => void) | undefined;
      let settled = false;
      // A long execution: find it while it runs and follow its events live.
      const watch = setTimeout(async function find() {
        if (settled) return;
        try {
          const [latest] = await api<Execution[]>("GET", `/executions?session_id=${id}&limit=1`);
          if (latest && latest.id !== before && latest.status === "running" && !settled) {
            update(key, (e) => ({ ...e, executionId: latest.id }));
            stop = followEvents(
              latest.id,
              (ev) => update(key, (e) => (e.events.some((x) => x.seq === ev.seq) ? e : { ...e, events: [...e.events, ev] })),
              (final) => update(key, (e) => ({ ...e, final: e.final ?? final })),
            );
            return;
          }
        } catch {
          // the POST will report
        }
        if (!settled) setTimeout(find, 250);
      }, 150);
      try {
        const x = await api<Execution>("POST", "/executions/repl", { session_id: id, input: code });
        update(key, (e) => ({ ...e, executionId: x.id, final: x, events: x.events ?? e.events }));
      } catch (err) {
        const failure = err instanceof ApiFailure ? err : new ApiFailure(0, "ERROR", String(err));
        update(key, (e) => ({ ...e, failure }));
        if (failure.code === "SESSION_NOT_READY" || failure.code === "SESSION_NOT_FOUND") api<Session>("GET", `/sessions/${id}`).then(setSession, () => {});
      } finally {
        settled = true;
        clearTimeout(watch);
        stop?.();
        setBusy(false);
        input.current?.focus();
      }
    },
    [id, busy],
  );

  /** Stop: cancels the session's running execution (the one this console started: one runs at a time). */
  const stopRunning = useCallback(async () => {
    try {
      const [latest] = await api<Execution[]>("GET", `/executions?session_id=${id}&limit=1`);
      if (latest?.status === "running") await api<Execution>("POST", `/executions/${latest.id}/cancel`);
    } catch (err) {
      // It ended on its own first: its POST reports the outcome.
      if (!(err instanceof ApiFailure && err.code === "EXECUTION_NOT_RUNNING")) report(err);
    }
  }, [id, report]);

  /** Restart: a fresh global scope, startup files run again (a running execution is stopped first). */
  const [restarting, setRestarting] = useState(false);
  const restart = useCallback(async () => {
    setRestarting(true);
    try {
      if (busy) await stopRunning();
      let restarted: Session | undefined;
      for (let attempt = 0; !restarted; attempt++) {
        try {
          restarted = await api<Session>("POST", `/sessions/${id}/restart`);
        } catch (err) {
          // The stopped execution is still being recorded: try again shortly.
          if (!(err instanceof ApiFailure && err.code === "SESSION_BUSY" && attempt < 20)) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      setSession(restarted);
      setEntries((all) => [...all, { key: crypto.randomUUID(), input: "", events: [], note: "session restarted: fresh global scope, startup files run again" }]);
    } catch (err) {
      report(err);
      api<Session>("GET", `/sessions/${id}`).then(setSession, () => {});
    } finally {
      setRestarting(false);
    }
  }, [id, busy, report, stopRunning]);

  const runRef = useRef(run);
  runRef.current = run;
  useEffect(() => {
    let gone = false;
    void import("../editor.ts").then(({ replInput }) => {
      if (gone) return;
      input.current = replInput(inputHost.current!, { onRun: (text) => void runRef.current(text), history: hist.current });
      input.current.focus();
    });
    return () => {
      gone = true;
      input.current?.view.destroy();
      input.current = null;
    };
  }, [id]);
  useEffect(() => {
    log.current?.scrollTo(0, log.current.scrollHeight);
  }, [entries]);

  return html`<section class="console">
    <h2>Session <code>${short(id)}</code> ${session && html`<span class=${`status ${session.status}`}>${session.status}</span>`}
      ${session?.status === "ready" && html`<button class="restart" data-testid="restart" disabled=${restarting} onClick=${() => void restart()} title="Fresh global scope; startup files run again">${restarting ? "Restarting…" : "Restart"}</button>`}
      <span class="tabs"><button class=${tab === "console" ? "on" : ""} onClick=${() => setTab("console")}>Console</button><button class=${tab === "executions" ? "on" : ""} onClick=${() => setTab("executions")} id="executions-tab">Executions</button></span>
    </h2>
    ${session?.last_error && html`<div class="error">last error: ${session.last_error}</div>`}
    <div hidden=${tab !== "console"}>
      <div class="output" ref=${log} data-testid="log">
        ${entries.map(
          (e) => e.note ? html`<div class="line system note" data-testid="note"><span class="tag">system</span>${e.note}</div>` : html`<div class="entry" data-testid="entry">
            <div class="line input"><span class="prompt">›</span><pre>${e.input}</pre></div>
            ${e.events.map((ev) => html`<${EventLine} e=${ev} />`)}
            <${Outcome} entry=${e} />
          </div>`,
        )}
      </div>
      <div class="repl" ref=${inputHost}></div>
      <div class="muted hint">${busy
        ? html`running… <button class="stop" data-testid="stop" onClick=${() => void stopRunning()}>Stop</button>`
        : "Enter runs · Shift+Enter new line · ↑/↓ history"}</div>
    </div>
    ${tab === "executions" && html`<${Executions} sessionId=${id} report=${report} />`}
  </section>`;
}
