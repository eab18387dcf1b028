// The notes example's page frame. Markup is built with httpmod's html`` template, which escapes
// every interpolated value (a value made by html or raw itself, or a list of them, is kept).
const { html, raw } = require("httpmod");

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330}
header{display:flex;gap:1.2rem;align-items:center;padding:.7rem 2rem;background:#1d2330;color:#fff}
header a{color:#cfe0ff;text-decoration:none}header .who{margin-left:auto;opacity:.85}
main{padding:1.5rem 2rem;max-width:52rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e3e6ec;padding:.35rem .6rem;text-align:left;vertical-align:top}
input,textarea{font:inherit;width:100%;box-sizing:border-box;padding:.4rem;margin:.2rem 0 .7rem}textarea{min-height:8rem}
button{font:inherit;padding:.35rem 1rem;cursor:pointer}.muted{color:#69707d}.denied{color:#b3261e}
form.danger{margin-top:.5rem;padding:.6rem .9rem;border:1px solid #e6b8b4;border-radius:4px}form.danger button{color:#b3261e}code{background:#f1f3f7;padding:0 .25rem}`;

/** How a person is shown: the name they sign in with, else their full name, else their subject. */
function nameOf(actor) {
  const c = (actor && actor.claims) || {};
  if (typeof c.preferred_username === "string" && c.preferred_username) return c.preferred_username;
  if (typeof c.name === "string" && c.name) return c.name;
  return actor ? actor.id : "";
}

/** Whether the header links the audit page: admins only, as policy.yaml grants `audit:read` (the
 * route itself still asks the policy). Roles come from the `roles` and `groups` claims. */
function mayReadAudit(actor) {
  const c = (actor && actor.claims) || {};
  return [c.roles || [], c.groups || []].flat().includes("admin");
}

/** A whole page: the navigation, who is signed in, and the body (markup made by html``). */
function page(title, actor, body) {
  const who = actor
    ? html`<span class="who">${nameOf(actor)} · <a href="/auth/logout">Sign out</a></span>`
    : html`<span class="who"><a href="/auth/login?return_to=/notes">Sign in</a></span>`;
  const nav = html`<a href="/">Home</a><a href="/notes">Notes</a><a href="/sessions/">Session console</a>${
    mayReadAudit(actor) ? html`<a href="/admin/audit">Audit</a>` : ""
  }`;
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${title} · notes</title>
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <header><strong>notes</strong>${nav}${who}</header>
        <main><h1>${title}</h1>${body}</main>
      </body>
    </html>
  `;
}

module.exports = { html, page, nameOf, mayReadAudit };
