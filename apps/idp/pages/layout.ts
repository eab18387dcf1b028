// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** The page frame shared by the provider's HTML pages: small, accessible, no external assets. */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.5rem}h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
form.main{display:grid;gap:.6rem;max-width:24rem}
label{display:grid;gap:.2rem;font-weight:600}
input,textarea{font:inherit;padding:.4rem;border:1px solid #888;border-radius:4px}
textarea{font-family:ui-monospace,monospace;font-size:.9rem}
summary{cursor:pointer}
button{font:inherit;padding:.35rem .8rem;border-radius:4px;border:1px solid #555;background:#f3f3f3;cursor:pointer}
button.primary{background:#1f4fd1;color:#fff;border-color:#1f4fd1}
.picks{display:flex;flex-wrap:wrap;gap:.4rem}
.error{color:#a40000;font-weight:600}
section{margin-bottom:.6rem}
`;

export function page(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A page with one message (errors before the client is known, logout). */
export function messagePage(title: string, message: string, id = "message"): Html {
  return page(title, html`<p id="${id}" role="status">${message}</p>`);
}
