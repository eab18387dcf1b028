// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** `#/templates[/id]`: the template list and create form, with the selected template's detail beside it. */
import { html } from "htm/preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, type Template } from "../api.ts";
import { formReady } from "../forms.ts";
import { go } from "../navigation.ts";
import type { Report } from "../report.ts";
import { TemplateDetail } from "./template-detail.ts";

export function Templates({ report, selected }: { report: Report; selected?: string }) {
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
