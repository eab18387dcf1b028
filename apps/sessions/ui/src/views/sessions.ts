// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** `#/sessions`: the new-session form (and, without a disk, worktree file uploads) and the session list. */
import { html } from "htm/preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, putText, type Session, type Template } from "../api.ts";
import { short, time } from "../format.ts";
import { formReady, useDraft, valueOf } from "../forms.ts";
import { go } from "../navigation.ts";
import type { Report } from "../report.ts";

const STATUSES = ["", "starting", "ready", "crashed", "closed"];

export function Sessions({ report }: { report: Report }) {
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
