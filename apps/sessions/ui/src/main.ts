/**
 * The session service's web UI (Preact with htm templates: no JSX build step). Views by URL hash:
 * `#/templates[/id]`, `#/sessions`, `#/sessions/<id>` (the console). It talks only to the public
 * REST API (api.ts) and shows every API error with its code and message.
 */
import { html } from "htm/preact";
import { render } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure, followEvents, putText, type Capability, type ExecEvent, type Execution, type Named, type RuntimeMemory, type RuntimeSummary, type Session, type StartupFile, type Template } from "./api.ts";
import type { CodeEditor, ReplInput } from "./editor.ts";
import { InputHistory } from "./history.ts";
import "./style.css";

type Report = (err: unknown) => void;

const MODULES = ["fs", "path", "http", "env"];
const CAPABILITY_KINDS = ["module", "global", "fs", "net", "env"];
const STATUSES = ["", "starting", "ready", "crashed", "closed"];

function useHash(): string {
  const [hash, setHash] = useState(location.hash || "#/sessions");
  useEffect(() => {
    const on = () => setHash(location.hash || "#/sessions");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

const go = (hash: string) => (location.hash = hash);
const short = (id: string) => id.slice(0, 8);
const time = (iso?: string) => (iso ? new Date(iso).toLocaleTimeString() : "");

function ErrorBanner({ error, clear }: { error: ApiFailure | Error | null; clear: () => void }) {
  if (!error) return null;
  const code = error instanceof ApiFailure ? error.code : "ERROR";
  return html`<div class="error" role="alert" data-testid="error"><code>${code}</code> ${error.message} <button class="link" onClick=${clear}>dismiss</button></div>`;
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;

/** The name a form control is shown by: its <label>, else its aria-label. */
function labelOf(el: HTMLInputElement): string {
  return (el.labels?.[0]?.textContent ?? el.getAttribute("aria-label") ?? el.name).replace(/\s+/g, " ").trim();
}

/**
 * Forms are `novalidate`, so an empty or invalid field never makes a button do nothing: it is
 * reported in the page's error banner (and focused). True when the form may be sent.
 */
function formReady(form: HTMLFormElement, report: Report): boolean {
  const bad = [...form.elements].find((el) => (el as HTMLInputElement).willValidate && !(el as HTMLInputElement).checkValidity()) as HTMLInputElement | undefined;
  if (!bad) return true;
  const what = labelOf(bad);
  report(new ApiFailure(0, "REQUIRED", bad.validity.valueMissing ? `${what[0]!.toUpperCase()}${what.slice(1)} is empty: fill it in first.` : `${what}: ${bad.validationMessage}`));
  bad.focus();
  return false;
}

/** A form's state kept in sessionStorage under `key`: what is typed survives the page's own
 * refreshes (its lists poll) and a reload of the tab. */
function useDraft<T extends Record<string, string | undefined>>(key: string, initial: T): [T, (field: keyof T, value: string) => void] {
  const [draft, setDraft] = useState<T>(() => {
    try {
      return { ...initial, ...(JSON.parse(sessionStorage.getItem(key) ?? "{}") as Partial<T>) };
    } catch {
      return initial;
    }
  });
  const set = useCallback(
    (field: keyof T, value: string) =>
      setDraft((d) => {
        const next = { ...d, [field]: value };
        try {
          sessionStorage.setItem(key, JSON.stringify(next));
        } catch {
          // storage full or off: the state still holds it
        }
        return next;
      }),
    [key],
  );
  return [draft, set];
}

const valueOf = (e: Event) => (e.target as HTMLInputElement).value;

function Summary() {
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

// ---- templates -----------------------------------------------------------------------------------

function Templates({ report, selected }: { report: Report; selected?: string }) {
  const [templates, setTemplates] = useState<Template[]>([]);
  const [name, setName] = useState("");
  const load = useCallback(() => api<Template[]>("GET", "/templates").then(setTemplates, report), [report]);
  useEffect(() => void load(), [load]);
  const create = async (e: Event) => {
    e.preventDefault();
    if (!formReady(e.target as HTMLFormElement, report)) return;
    try {
      const t = await api<Template>("POST", "/templates", { name });
      setName("");
      await load();
      go(`#/templates/${t.id}`);
    } catch (err) {
      report(err);
    }
  };
  const remove = async (t: Template) => {
    if (!confirm(`Delete template ${t.name}?`)) return;
    try {
      await api("DELETE", `/templates/${t.id}`);
      if (selected === t.id) go("#/templates");
      await load();
    } catch (err) {
      report(err);
    }
  };
  return html`<div class="split">
    <section class="list">
      <h2>Templates</h2>
      <form onSubmit=${create} class="row" novalidate>
        <label class="field">Template name <input id="template-name" placeholder="new template name" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} aria-label="template name" required /></label>
        <button type="submit" id="create-template">Create</button>
      </form>
      <table>
        <tbody>
          ${templates.map(
            (t) => html`<tr class=${t.id === selected ? "selected" : ""}>
              <td><a href=${`#/templates/${t.id}`}>${t.name}</a></td>
              <td class="muted">${t.engine}</td>
              <td><button class="link danger" onClick=${() => remove(t)} aria-label=${`delete ${t.name}`}>delete</button></td>
            </tr>`,
          )}
        </tbody>
      </table>
      ${templates.length === 0 && html`<p class="muted">No templates yet: create one, then a session from it.</p>`}
    </section>
    <section class="detail">${selected ? html`<${TemplateDetail} id=${selected} key=${selected} report=${report} />` : html`<p class="muted">Select a template to edit its settings, capabilities, startup files, modules and libraries.</p>`}</section>
  </div>`;
}

function JsonBox({ doc, label, onSave, report }: { doc: string; label: string; onSave: (value: unknown) => Promise<unknown>; report: Report }) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<CodeEditor | null>(null);
  const [note, setNote] = useState("");
  useEffect(() => {
    let gone = false;
    void import("./editor.ts").then(({ jsonEditor }) => {
      if (!gone) editor.current = jsonEditor(host.current!, doc, label);
    });
    return () => {
      gone = true;
      editor.current?.view.destroy();
    };
  }, [doc, label]);
  const save = async () => {
    let value: unknown;
    if (!editor.current) return;
    try {
      value = JSON.parse(editor.current.value());
    } catch (err) {
      setNote(`not JSON: ${(err as Error).message}`);
      return;
    }
    setNote("saving…");
    try {
      await onSave(value);
      setNote(`Saved at ${new Date().toLocaleTimeString()}.`);
    } catch (err) {
      setNote("not saved (see the message above)");
      report(err);
    }
  };
  return html`<div class="json"><div ref=${host} class="editor"></div><div class="row"><button onClick=${save}>Save ${label}</button><span class="muted" role="status" data-testid=${`${label}-note`}>${note}</span></div></div>`;
}

function TemplateDetail({ id, report }: { id: string; report: Report }) {
  const [template, setTemplate] = useState<Template | null>(null);
  const [settings, setSettings] = useState<string | null>(null);
  const [caps, setCaps] = useState<Capability[]>([]);
  const [files, setFiles] = useState<StartupFile[]>([]);
  const [modules, setModules] = useState<Named[]>([]);
  const [libraries, setLibraries] = useState<Named[]>([]);
  const path = `/templates/${id}`;
  const load = useCallback(async () => {
    try {
      const [t, s, c, f, m, l] = await Promise.all([
        api<Template>("GET", path),
        api<unknown>("GET", `${path}/settings`),
        api<Capability[]>("GET", `${path}/capabilities`),
        api<StartupFile[]>("GET", `${path}/startup-files`),
        api<Named[]>("GET", `${path}/modules`),
        api<Named[]>("GET", `${path}/libraries`),
      ]);
      setTemplate(t);
      setSettings(JSON.stringify(s, null, 2));
      setCaps(c);
      setFiles(f);
      setModules(m);
      setLibraries(l);
    } catch (err) {
      report(err);
    }
  }, [path, report]);
  useEffect(() => void load(), [load]);
  const act = (work: () => Promise<unknown>) => async (e?: Event) => {
    e?.preventDefault();
    if (e?.target instanceof HTMLFormElement && !formReady(e.target, report)) return;
    try {
      await work();
      await load();
    } catch (err) {
      report(err);
    }
  };
  const field = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement).value;
  if (!template) return html`<p class="muted">Loading…</p>`;
  return html`<div>
    <h2>${template.name} <small class="muted">${template.engine} · ${short(template.id)}</small></h2>
    <h3>Settings</h3>
    ${settings !== null && html`<${JsonBox} doc=${settings} label="settings" report=${report} onSave=${async (value: unknown) => {
      await api("PATCH", `${path}/settings`, value);
      await load();
    }} />`}
    <h3>Capabilities</h3>
    <table><tbody>${caps.map((c) => html`<tr><td>${c.kind}</td><td>${c.name}</td><td>${c.enabled ? "enabled" : "disabled"}</td><td><code>${JSON.stringify(c.config)}</code></td></tr>`)}</tbody></table>
    <form class="row" novalidate onSubmit=${(e: Event) => {
      const f = e.target as HTMLFormElement;
      let config: unknown = {};
      try {
        config = JSON.parse(field(f, "config") || "{}");
      } catch {
        e.preventDefault();
        report(new Error("capability config is not JSON"));
        return;
      }
      return act(() => api("POST", `${path}/capabilities`, { kind: field(f, "kind"), name: field(f, "name"), enabled: (f.elements.namedItem("enabled") as HTMLInputElement).checked, config }))(e);
    }}>
      <select name="kind" aria-label="capability kind">${CAPABILITY_KINDS.map((k) => html`<option>${k}</option>`)}</select>
      <input name="name" placeholder="name (e.g. APP_*)" required aria-label="capability name" />
      <label><input type="checkbox" name="enabled" checked /> enabled</label>
      <input name="config" placeholder='config {"…"}' aria-label="capability config" />
      <button>Add capability</button>
    </form>
    <h3>Startup files</h3>
    <table><tbody>${files.map((f) => html`<tr><td>${f.order_index}</td><td>${f.path}</td><td>${f.mode}</td></tr>`)}</tbody></table>
    <form class="row" novalidate onSubmit=${(e: Event) => {
      const f = e.target as HTMLFormElement;
      return act(() => api("POST", `${path}/startup-files`, { path: field(f, "path"), order_index: Number(field(f, "order") || 0) }))(e);
    }}>
      <input name="path" placeholder="path in the worktree (init.js)" required aria-label="startup file path" />
      <input name="order" type="number" placeholder="order" aria-label="order index" class="narrow" />
      <button>Add startup file</button>
    </form>
    <h3>Modules</h3>
    <p>${modules.map((m) => html`<span class="chip">${m.name} <button class="link danger" onClick=${act(() => api("DELETE", `${path}/modules/${encodeURIComponent(m.name)}`))} aria-label=${`remove module ${m.name}`}>×</button></span>`)}</p>
    <form class="row" onSubmit=${(e: Event) => act(() => api("POST", `${path}/modules`, { name: field(e.target as HTMLFormElement, "name") }))(e)}>
      <select name="name" aria-label="module">${MODULES.map((m) => html`<option>${m}</option>`)}</select>
      <button>Add module</button>
    </form>
    <h3>Libraries</h3>
    <p>${libraries.map((l) => html`<span class="chip">${l.name} <button class="link danger" onClick=${act(() => api("DELETE", `${path}/libraries/${encodeURIComponent(l.name)}`))} aria-label=${`remove library ${l.name}`}>×</button></span>`)}</p>
    <form class="row" novalidate onSubmit=${(e: Event) => act(() => api("POST", `${path}/libraries`, { name: field(e.target as HTMLFormElement, "name") }))(e)}>
      <input name="name" placeholder="library name (a file in the library directory)" required aria-label="library name" />
      <button>Add library</button>
    </form>
  </div>`;
}

// ---- sessions ------------------------------------------------------------------------------------

function Sessions({ report }: { report: Report }) {
  const [status, setStatus] = useState("");
  const [sessions, setSessions] = useState<Session[]>([]);
  const [templates, setTemplates] = useState<Template[]>([]);
  const load = useCallback(
    () =>
      Promise.all([api<Session[]>("GET", `/sessions${status ? `?status=${status}` : ""}`), api<Template[]>("GET", "/templates")]).then(([s, t]) => {
        setSessions(s);
        setTemplates(t);
      }, report),
    [status, report],
  );
  useEffect(() => {
    void load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, [load]);
  const names = new Map(templates.map((t) => [t.id, t.name]));
  // Deployments without a disk (workerd) take worktree files over the API: offer that there,
  // before the form, since a worktree exists there only once a file is put under it. Unknown
  // until the API description is read.
  const [uploads, setUploads] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    api<{ paths?: Record<string, unknown> }>("GET", "/openapi.json").then(
      (doc) => setUploads(Object.keys(doc.paths ?? {}).some((p) => p.endsWith("/worktree-files"))),
      () => setUploads(false),
    );
  }, []);
  // What is typed stays typed: the lists above refresh every few seconds, and a reload keeps it too.
  const [form, setField] = useDraft<{ template: string; workspace: string; commit: string; worktree?: string }>("sessions-ui:new-session", { template: "", workspace: "default", commit: "HEAD" });
  const [file, setFileField] = useDraft("sessions-ui:worktree-file", { root: "/demo", path: "", text: "" });
  // The worktree's default is a directory that exists: /tmp on a disk; on storage, none until a
  // file is put (then the directory it went to).
  const worktree = form.worktree ?? (uploads === false ? "/tmp" : "");
  const template = templates.some((t) => t.id === form.template) ? form.template : (templates[0]?.id ?? "");
  const [stored, setStored] = useState<string[]>([]);
  const putFile = async (e: Event) => {
    e.preventDefault();
    if (!formReady(e.target as HTMLFormElement, report)) return;
    try {
      await putText(`/worktree-files?${new URLSearchParams({ root: file.root, path: file.path })}`, file.text);
      setStored((all) => [...all, `${file.root.replace(/\/$/, "")}/${file.path}`]);
      setFileField("path", "");
      setFileField("text", "");
      if (!worktree) setField("worktree", file.root);
    } catch (err) {
      report(err);
    }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    if (!formReady(e.target as HTMLFormElement, report)) return;
    try {
      const s = await api<Session>("POST", "/sessions", { template_id: template, workspace_id: form.workspace, base_commit_oid: form.commit, worktree_path: worktree });
      go(`#/sessions/${s.id}`);
    } catch (err) {
      report(err);
    }
  };
  const close = async (s: Session) => {
    try {
      await api("POST", `/sessions/${s.id}/close`);
      await load();
    } catch (err) {
      report(err);
    }
  };
  const uploadForm =
    uploads &&
    html`<section class="uploads" data-testid="uploads">
      <h2>Worktree files</h2>
      <p class="muted">This deployment keeps worktrees in storage, not on a disk: a directory exists once a file is put under it. Put the session's files first, then create the session on that directory.</p>
      <form class="row" onSubmit=${putFile} novalidate>
        <label class="field">Worktree root <input name="root" value=${file.root} onInput=${(e: Event) => setFileField("root", valueOf(e))} required aria-label="worktree root" class="narrow" /></label>
        <label class="field">File path <input name="path" value=${file.path} onInput=${(e: Event) => setFileField("path", valueOf(e))} placeholder="init.js" required aria-label="file path" class="narrow" /></label>
        <label class="field">File contents <input name="text" value=${file.text} onInput=${(e: Event) => setFileField("text", valueOf(e))} placeholder="file contents" aria-label="file contents" /></label>
        <button id="put-file">Put file</button>
      </form>
      ${stored.length > 0 && html`<p class="muted" data-testid="stored" role="status">${stored.length} stored: ${stored.join(", ")}</p>`}
    </section>`;
  return html`<section>
    ${uploadForm}
    <h2>New session</h2>
    ${templates.length === 0
      ? html`<p class="muted">Create a <a href="#/templates">template</a> first.</p>`
      : html`<form class="row" onSubmit=${create} novalidate>
          <label class="field">Template <select name="template" value=${template} onChange=${(e: Event) => setField("template", valueOf(e))} aria-label="template">${templates.map((t) => html`<option value=${t.id}>${t.name}</option>`)}</select></label>
          <label class="field">Workspace id <input name="workspace" value=${form.workspace} onInput=${(e: Event) => setField("workspace", valueOf(e))} required aria-label="workspace id" class="narrow" /></label>
          <label class="field">Base commit <input name="commit" value=${form.commit} onInput=${(e: Event) => setField("commit", valueOf(e))} required aria-label="base commit" class="narrow" /></label>
          <label class="field">Worktree path <input name="worktree" value=${worktree} onInput=${(e: Event) => setField("worktree", valueOf(e))} required aria-label="worktree path" placeholder=${uploads ? "put a file above first" : "/path/to/a/directory"} title="an absolute directory: the session's files" /></label>
          <button id="create-session">Create session</button>
        </form>`}
    <h2>Sessions
      <select value=${status} onChange=${(e: Event) => setStatus((e.target as HTMLSelectElement).value)} aria-label="status filter" class="inline">
        ${STATUSES.map((s) => html`<option value=${s}>${s || "all"}</option>`)}
      </select>
    </h2>
    <table data-testid="sessions">
      <thead><tr><th>Session</th><th>Template</th><th>Status</th><th>Created</th><th>Last error</th><th></th></tr></thead>
      <tbody>
        ${sessions.map(
          (s) => html`<tr>
            <td><a href=${`#/sessions/${s.id}`}><code>${short(s.id)}</code></a></td>
            <td>${names.get(s.template_id) ?? short(s.template_id)}</td>
            <td><span class=${`status ${s.status}`}>${s.status}</span></td>
            <td>${time(s.created_at)}</td>
            <td class="error-text">${s.last_error ?? ""}</td>
            <td>${s.status === "ready" && html`<a href=${`#/sessions/${s.id}`}>console</a> · <button class="link" onClick=${() => close(s)}>close</button>`}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${sessions.length === 0 && html`<p class="muted">No sessions${status ? ` with status ${status}` : ""}.</p>`}
  </section>`;
}

// ---- console -------------------------------------------------------------------------------------

/** One execution as the console shows it: its events as they arrive, then its outcome. */
interface Entry {
  key: string;
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
  return html`<div class="line outcome ok muted" data-testid="outcome">${x.status}${ms}</div>`;
}

function Console({ id, report }: { id: string; report: Report }) {
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

  const runRef = useRef(run);
  runRef.current = run;
  useEffect(() => {
    let gone = false;
    void import("./editor.ts").then(({ replInput }) => {
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
      <span class="tabs"><button class=${tab === "console" ? "on" : ""} onClick=${() => setTab("console")}>Console</button><button class=${tab === "executions" ? "on" : ""} onClick=${() => setTab("executions")} id="executions-tab">Executions</button></span>
    </h2>
    ${session?.last_error && html`<div class="error">last error: ${session.last_error}</div>`}
    <div hidden=${tab !== "console"}>
      <div class="output" ref=${log} data-testid="log">
        ${entries.map(
          (e) => html`<div class="entry" data-testid="entry">
            <div class="line input"><span class="prompt">›</span><pre>${e.input}</pre></div>
            ${e.events.map((ev) => html`<${EventLine} e=${ev} />`)}
            <${Outcome} entry=${e} />
          </div>`,
        )}
      </div>
      <div class="repl" ref=${inputHost}></div>
      <div class="muted hint">${busy ? "running…" : "Enter runs · Shift+Enter new line · ↑/↓ history"}</div>
    </div>
    ${tab === "executions" && html`<${Executions} sessionId=${id} report=${report} />`}
  </section>`;
}

function Executions({ sessionId, report }: { sessionId: string; report: Report }) {
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

// ---- the page ------------------------------------------------------------------------------------

function App() {
  const hash = useHash();
  const [error, setError] = useState<ApiFailure | Error | null>(null);
  const report = useCallback((err: unknown) => setError(err instanceof Error ? err : new Error(String(err))), []);
  const [, section, id] = hash.split("/");
  useEffect(() => setError(null), [hash]);
  let view;
  if (section === "templates") view = html`<${Templates} report=${report} selected=${id} />`;
  else if (section === "sessions" && id) view = html`<${Console} id=${id} key=${id} report=${report} />`;
  else view = html`<${Sessions} report=${report} />`;
  return html`<header>
      <strong>sessions</strong>
      <a href="#/sessions" class=${section === "sessions" && !id ? "on" : ""}>Sessions</a>
      <a href="#/templates" class=${section === "templates" ? "on" : ""}>Templates</a>
      <${Summary} />
    </header>
    <main><${ErrorBanner} error=${error} clear=${() => setError(null)} />${view}</main>`;
}

render(html`<${App} />`, document.getElementById("app")!);
