// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * Dev mode's page at `/_routes`: the plan table and, when the last edit of the script did not
 * load, its error (the previous routes keep serving meanwhile); and at `/_routes/openapi.json` the
 * plan as OpenAPI 3.1. Only served with `--dev` (`ROUTES_DEV` on workerd).
 */
import { html } from "hono/html";
import { FRAME_DENY } from "#lib/http";
import type { RouteHost } from "../core/types.ts";
import { planOpenApi } from "./openapi.ts";

export const DEV_PAGE_PATH = "/_routes";
/** The plan as OpenAPI 3.1 (host/openapi.ts), under the dev page's reserved prefix. */
const OPENAPI_PATH = `${DEV_PAGE_PATH}/openapi.json`;

export function devPage(request: Request, host: RouteHost, scriptPath: string): Response | undefined {
  if (request.method !== "GET" && request.method !== "HEAD") return undefined;
  const path = new URL(request.url).pathname;
  if (path === OPENAPI_PATH) {
    return Response.json(planOpenApi(host.routes(), { title: `routes: ${scriptPath}` }), { headers: { "cache-control": "no-store", ...FRAME_DENY } });
  }
  if (request.method !== "GET" || path !== DEV_PAGE_PATH) return undefined;
  const rows = host.routes();
  const error = host.loadError;
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>routes: ${scriptPath}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{padding:.25rem .75rem;border-bottom:1px solid #ddd;text-align:left}
.public{color:#a15c00}.error{background:#fde8e8;border:1px solid #e0a0a0;padding:1rem;white-space:pre-wrap;font-family:monospace}</style></head>
<body><h1>Routes of <code>${scriptPath}</code></h1>
<p><a href="${OPENAPI_PATH}">The plan as OpenAPI 3.1</a></p>
${error ? html`<h2>The last edit did not load: the previous routes are still served</h2><div class="error" id="load-error">${error}</div>` : html`<p id="load-ok">The script loaded.</p>`}
<table><thead><tr><th>method</th><th>pattern</th><th>access</th><th>resources</th><th>csrf</th><th>action</th><th>audit</th><th>at</th></tr></thead><tbody>
${rows.map(
  (r) => html`<tr><td>${r.kind === "route" ? r.method : r.kind}</td><td><code>${r.pattern}</code></td><td class="${r.access}">${r.access}</td><td>${r.resources?.join(", ") ?? ""}</td><td>${r.csrf ? "yes" : ""}</td><td>${r.action ?? ""}</td><td>${r.audit ?? ""}</td><td>${r.at ?? (r.source === "host" ? "(host)" : "")}</td></tr>`,
)}
</tbody></table></body></html>`;
  return new Response(String(body), { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...FRAME_DENY } });
}
