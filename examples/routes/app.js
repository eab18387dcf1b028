// A small notes app, the identity provider and the session service behind one origin.
//
//   npm start                     (serves this on http://127.0.0.1:8080 beside the other two)
//   npm run routes -- serve --script examples/routes/app.js --issuer /idp \
//     --policy-file examples/routes/policy.yaml --db file:./data/routes.db
//
// Sign in as any seeded user (alice, bob, admin, ...). Each user writes notes in a workspace of
// their own (their `tenant` claim, else their subject): the policy refuses anyone else's note
// with 403 and the audit keeps the denial. Forms carry the CSRF token; every change is audited.
const httpmod = require("httpmod");
const resources = require("resources");
const audit = require("audit");
const { html, page } = require("./lib/page.js");

const app = httpmod.app();
const user = httpmod.user().required();
const note = httpmod.resource("note").idFromParam("id").mustExist();

// The identity provider, in this process: its issuer is <origin>/idp.
app.mount("/idp", require("idp").handler());

// The session service under /sessions: its console at /sessions/, its API at /sessions/api/v1,
// for signed-in users.
app.all("/sessions/*").auth(user).allow("sessions:use").audit("sessions.api").mount(require("sessions").handler(), { stripPrefix: true });

/** Where a user's notes live: their tenant when the provider gives one, else their own space. */
const workspaceOf = (actor) => (actor.claims && typeof actor.claims.tenant === "string" ? actor.claims.tenant : actor.id);

const csrfField = (ctx) => html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;

const title = (body) => {
  const t = body && typeof body.title === "string" ? body.title.trim() : "";
  if (t === "" || t.length > 200) return null;
  return t;
};

app.get("/").public().handle(() =>
  page("One origin", null, html`
    <p>A notes app written as a route script, with the identity provider and the session service
    mounted beside it on this origin.</p>
    <table>
      <tr><td><a href="/notes">/notes</a></td><td>your notes (signs you in first: try <code>alice</code>)</td></tr>
      <tr><td><a href="/sessions/">/sessions/</a></td><td>the session console (templates, sessions, a REPL), behind sign-in; its API at /sessions/api/v1</td></tr>
      <tr><td><a href="/admin/audit">/admin/audit</a></td><td>the audit log (sign in as <code>admin</code>)</td></tr>
      <tr><td><a href="/idp/.well-known/openid-configuration">/idp</a></td><td>the identity provider's discovery document</td></tr>
    </table>`));

app.get("/notes").auth(user).allow("notes:list").handle(async (ctx) => {
  const notes = await resources.list("note", { tenantId: workspaceOf(ctx.actor) });
  return page("Notes", ctx.actor, html`
    <p class="muted">Workspace <code>${workspaceOf(ctx.actor)}</code></p>
    ${notes.length === 0 ? html`<p>No notes yet.</p>` : html`<table><tr><th>Title</th><th>By</th></tr>${notes.map(
      (n) => html`<tr><td><a href="/notes/${encodeURIComponent(n.id)}">${n.title}</a></td><td>${n.owner}</td></tr>`,
    )}</table>`}
    <h2>New note</h2>
    <form method="post" action="/notes">${csrfField(ctx)}
      <label>Title <input name="title" required maxlength="200"></label>
      <label>Text <textarea name="text"></textarea></label>
      <button id="create">Create</button>
    </form>`);
});

app.post("/notes").auth(user).csrf().allow("notes:create").audit("note.create").handle(async (ctx, res) => {
  const t = title(ctx.body);
  if (!t) return res.status(400).html(page("Not saved", ctx.actor, html`<p>A note needs a title of at most 200 characters.</p>`));
  const saved = await resources.put({ type: "note", tenantId: workspaceOf(ctx.actor), owner: ctx.actor.id, attributes: { title: t, text: String(ctx.body.text || ""), updatedAt: new Date().toISOString() } });
  res.redirect(303, `/notes/${encodeURIComponent(saved.id)}`);
});

app.get("/notes/:id").auth(user).resource(note).allow("notes:read").audit("note.read").handle(async (ctx) => {
  const n = ctx.resource("note");
  const history = await audit.events({ resource: { type: "note", id: n.id }, limit: 20 });
  return page(n.title, ctx.actor, html`
    <form method="post" action="/notes/${encodeURIComponent(n.id)}">${csrfField(ctx)}
      <label>Title <input name="title" value="${n.title}" required maxlength="200"></label>
      <label>Text <textarea name="text">${n.text}</textarea></label>
      <button id="save">Save</button>
    </form>
    <form class="inline" method="post" action="/notes/${encodeURIComponent(n.id)}/delete">${csrfField(ctx)}<button id="delete">Delete</button></form>
    <h2>History</h2>
    <table id="history"><tr><th>At</th><th>Event</th><th>Outcome</th><th>Who</th></tr>${history.map(
      (e) => html`<tr><td>${e.at}</td><td>${e.event}</td><td class="${e.outcome === "denied" ? "denied" : ""}">${e.outcome}${e.reason ? ` (${e.reason})` : ""}</td><td>${e.actor ? e.actor.id : ""}</td></tr>`,
    )}</table>`);
});

app.post("/notes/:id").auth(user).resource(note).csrf().allow("notes:write").audit("note.update").handle(async (ctx, res) => {
  const n = ctx.resource("note");
  const t = title(ctx.body);
  if (!t) return res.status(400).html(page("Not saved", ctx.actor, html`<p>A note needs a title of at most 200 characters.</p>`));
  await resources.put({ type: "note", id: n.id, tenantId: n.tenantId, owner: n.owner, attributes: { title: t, text: String(ctx.body.text || ""), updatedAt: new Date().toISOString() } });
  res.redirect(303, `/notes/${encodeURIComponent(n.id)}`);
});

app.post("/notes/:id/delete").auth(user).resource(note).csrf().allow("notes:delete").audit("note.delete").handle(async (ctx, res) => {
  await resources.remove("note", ctx.resource("note").id);
  res.redirect(303, "/notes");
});

// Admins only (policy.yaml): the newest audit events, denials first in mind.
app.get("/admin/audit").auth(user).allow("audit:read").handle(async (ctx) => {
  const outcome = ["allowed", "denied", "completed", "failed"].includes(ctx.request.query.outcome) ? ctx.request.query.outcome : undefined;
  const events = await audit.events({ outcome, limit: 100 });
  return page("Audit", ctx.actor, html`
    <p><a href="/admin/audit">all</a> · <a href="/admin/audit?outcome=denied">denied</a> · <a href="/admin/audit?outcome=failed">failed</a></p>
    <table><tr><th>At</th><th>Event</th><th>Outcome</th><th>Who</th><th>Route</th><th>Resource</th><th>Status</th></tr>${events.map(
      (e) => html`<tr><td>${e.at}</td><td>${e.event}</td><td class="${e.outcome === "denied" ? "denied" : ""}">${e.outcome}${e.reason ? ` (${e.reason})` : ""}</td><td>${e.actor ? e.actor.id : ""}</td><td>${e.method} ${e.pattern}</td><td>${e.resource ? `${e.resource.type || ""} ${e.resource.id}` : ""}</td><td>${e.statusCode}</td></tr>`,
    )}</table>`);
});
