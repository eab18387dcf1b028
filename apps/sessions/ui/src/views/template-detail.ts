// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** One template's settings (a JSON editor), capabilities, startup files, modules and libraries. */
import { html } from "htm/preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, type Capability, type Named, type StartupFile, type Template } from "../api.ts";
import type { CodeEditor } from "../editor.ts";
import { short } from "../format.ts";
import { formReady } from "../forms.ts";
import type { Report } from "../report.ts";

const MODULES = ["fs", "path", "http", "env"];
const CAPABILITY_KINDS = ["module", "global", "fs", "net", "env"];

function JsonBox({ doc, label, onSave, report }: { doc: string; label: string; onSave: (value: unknown) => Promise<unknown>; report: Report }) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<CodeEditor | null>(null);
  const [note, setNote] = useState("");
  useEffect(() => {
    let gone = false;
    void import("../editor.ts").then(({ jsonEditor }) => {
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

export function TemplateDetail({ id, report }: { id: string; report: Report }) {
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
  // The dropdown offers only the modules not added yet (adding one twice is a 409).
  const addable = MODULES.filter((m) => !modules.some((added) => added.name === m));
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
    ${addable.length === 0
      ? html`<p class="muted" data-testid="modules-all-added">Every module of the catalog is added.</p>`
      : html`<form class="row" onSubmit=${(e: Event) => act(() => api("POST", `${path}/modules`, { name: field(e.target as HTMLFormElement, "name") }))(e)}>
      <select name="name" aria-label="module" key=${addable.join(",")}>${addable.map((m) => html`<option>${m}</option>`)}</select>
      <button>Add module</button>
    </form>`}
    <h3>Libraries</h3>
    <p>${libraries.map((l) => html`<span class="chip">${l.name} <button class="link danger" onClick=${act(() => api("DELETE", `${path}/libraries/${encodeURIComponent(l.name)}`))} aria-label=${`remove library ${l.name}`}>×</button></span>`)}</p>
    <form class="row" novalidate onSubmit=${(e: Event) => act(() => api("POST", `${path}/libraries`, { name: field(e.target as HTMLFormElement, "name") }))(e)}>
      <input name="name" placeholder="library name (a file in the library directory)" required aria-label="library name" />
      <button>Add library</button>
    </form>
  </div>`;
}
