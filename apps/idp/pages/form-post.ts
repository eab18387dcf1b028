// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * The form_post response mode (OAuth 2.0 Form Post Response Mode): a page that posts the
 * authorization response to the redirect URI as soon as it loads (a button without script).
 */
import { html, raw } from "hono/html";
import type { Html } from "./layout.ts";

export function formPostPage(action: string, fields: [string, string][]): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Submitting the authorization response</title>
</head>
<body>
<form id="form-post" method="post" action="${action}">
${fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}<noscript><button type="submit">Continue</button></noscript>
</form>
<script>${raw('document.getElementById("form-post").submit();')}</script>
</body>
</html>`;
}
