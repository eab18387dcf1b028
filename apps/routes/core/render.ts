// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * The renderer the command line and the Worker configure for `res.html(value)` with a value that
 * is not a string (and for a handler that returns one): the data as a plain HTML page, built with
 * Hono's `html` template, which escapes every interpolated value. A `title` field becomes the page
 * title and heading; a list of objects a table; a list of other values a list; an object a
 * definition list; anything else text. Nesting stops at 6 levels.
 */
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { HostValue } from "#lib/sandbox";

type Fragment = HtmlEscapedString | Promise<HtmlEscapedString> | string;

const isRecord = (v: unknown): v is Record<string, HostValue> => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);

function fragment(value: HostValue, depth: number): Fragment {
  if (value === null || value === undefined) return "";
  if (depth > 6) return html`<code>…</code>`;
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isRecord)) {
      const columns = [...new Set(value.flatMap((row) => Object.keys(row as Record<string, HostValue>)))];
      return html`<table><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>${value.map(
        (row) => html`<tr>${columns.map((c) => html`<td>${fragment((row as Record<string, HostValue>)[c], depth + 1)}</td>`)}</tr>`,
      )}</tbody></table>`;
    }
    return html`<ul>${value.map((item) => html`<li>${fragment(item, depth + 1)}</li>`)}</ul>`;
  }
  if (isRecord(value)) return html`<dl>${Object.entries(value).map(([k, v]) => html`<dt>${k}</dt><dd>${fragment(v, depth + 1)}</dd>`)}</dl>`;
  if (value instanceof Uint8Array) return html`<code>${value.byteLength} bytes</code>`;
  return html`${String(value)}`;
}

export async function renderValue(value: HostValue): Promise<string> {
  const { title, ...rest } = isRecord(value) ? value : { title: undefined };
  const body = isRecord(value) ? fragment(rest as HostValue, 0) : fragment(value, 0);
  const heading = typeof title === "string" ? title : "";
  const page = await html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${heading || "page"}</title>
${raw("<style>body{font:15px/1.5 system-ui,sans-serif;margin:2rem;max-width:60rem}table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left}dt{font-weight:600}dd{margin:0 0 .5rem 1rem}</style>")}
</head><body>${heading ? html`<h1>${heading}</h1>` : ""}${body}</body></html>`;
  return page.toString();
}
