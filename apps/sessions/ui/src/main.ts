// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * The session service's web UI (Preact with htm templates: no JSX build step). Views by URL hash:
 * `#/templates[/id]`, `#/sessions`, `#/sessions/<id>` (the console). It talks only to the public
 * REST API (api.ts) and shows every API error with its code and message. Each view is a module in
 * views/; this one picks the view for the hash and draws the header and the error banner around it.
 */
import { html } from "htm/preact";
import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import type { ApiFailure } from "./api.ts";
import { useHash } from "./navigation.ts";
import { ErrorBanner } from "./report.ts";
import { Console } from "./views/console.ts";
import { Sessions } from "./views/sessions.ts";
import { Summary } from "./views/summary.ts";
import { Templates } from "./views/templates.ts";
import "./style.css";

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
