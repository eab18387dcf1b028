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
const { html } = httpmod; // escapes every interpolated value (docs/routes.md, "HTML")
const { page, nameOf } = require("./lib/page.js");

const app = httpmod.app();
const user = httpmod.user().required();
const note = httpmod.resource("note").idFromParam("id").mustExist();

// The identity provider, in this process: its issuer is <origin>/idp. It is this example's own
// provider (not the one `npm start` runs on :5556): its debug page is /idp/debug/ui.
app.mount("/idp", require("idp").handler());

// The session service under /sessions: its console at /sessions/, its API at /sessions/api/v1,
// for signed-in users. Its reads are not audited (the console refreshes its lists every few
// seconds, which would bury people's actions); every change is. The first route that matches wins.
const sessions = require("sessions").handler();
app.get("/sessions/*").auth(user).allow("sessions:use").mount(sessions, { stripPrefix: true });
app.all("/sessions/*").auth(user).allow("sessions:use").audit("sessions.api").mount(sessions, { stripPrefix: true });

/** Where a user's notes live: their tenant when the provider gives one, else their own space. */
const workspaceOf = (actor) => (actor.claims && typeof actor.claims.tenant === "string" ? actor.claims.tenant : actor.id);

const csrfField = (ctx) => html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;

const title = (body) => {
  const t = body && typeof body.title === "string" ? body.title.trim() : "";
  if (t === "" || t.length > 200) return null;
  return t;
};

app.get("/").public().handle(() =>
  page(
    "One origin",
    null,
    html`
      <p>A notes app written as a route script, with the identity provider and the session service
      mounted beside it on this origin.</p>
      <table>
        <tr>
          <td><a href="/notes">/notes</a></td>
          <td>your notes (signs you in first: try <code>alice</code>)</td>
        </tr>
        <tr>
          <td><a href="/sessions/">/sessions/</a></td>
          <td>the session console (templates, sessions, a REPL), behind sign-in; its API at /sessions/api/v1</td>
        </tr>
        <tr>
          <td><a href="/admin/audit">/admin/audit</a></td>
          <td>the audit log (sign in as <code>admin</code>)</td>
        </tr>
        <tr>
          <td><a href="/idp/.well-known/openid-configuration">/idp</a></td>
          <td>this example's own identity provider (its discovery document); who is signed in there: <a href="/idp/debug/ui">/idp/debug/ui</a></td>
        </tr>
      </table>
      <p class="muted">The provider under /idp is part of this example. The one <code>npm start</code> also runs on port 5556
      is another provider, with sessions of its own.</p>
    `,
  )
);

app.get("/notes").auth(user).allow("notes:list").handle(async (ctx) => {
  const notes = await resources.list("note", { tenantId: workspaceOf(ctx.actor) });
  return page(
    "Notes",
    ctx.actor,
    html`
      <p class="muted">Workspace <code>${workspaceOf(ctx.actor)}</code></p>
      ${notes.length === 0 ? html`<p>No notes yet.</p>` : html`<table><tr><th>Title</th><th>By</th></tr>${
        notes.map(
          (n) =>
            html`
              <tr>
                <td><a href="/notes/${encodeURIComponent(n.id)}">${n.title}</a></td>
                <td>${n.ownerName || n.owner}</td>
              </tr>
            `,
        )
      }</table>`}
      <h2>New note</h2>
      <form method="post" action="/notes">${csrfField(ctx)}
        <label>Title <input name="title" required maxlength="200"></label>
        <label>Text <textarea name="text"></textarea></label>
        <button id="create">Create</button>
      </form>
    `,
  );
});

app.post("/notes").auth(user).csrf().allow("notes:create").audit("note.create").handle(async (ctx, res) => {
  const t = title(ctx.body);
  if (!t) return res.status(400).html(page("Not saved", ctx.actor, html`<p>A note needs a title of at most 200 characters.</p>`));
  const now = new Date().toISOString();
  const saved = await resources.put({
    type: "note",
    tenantId: workspaceOf(ctx.actor),
    owner: ctx.actor.id,
    attributes: { title: t, text: String(ctx.body.text || ""), ownerName: nameOf(ctx.actor), createdAt: now, updatedAt: now },
  });
  res.redirect(303, `/notes/${encodeURIComponent(saved.id)}`);
});

/** What an edit changed, in a few words: the history shows it. */
function changeOf(before, title, text) {
  const parts = [];
  if (before.title !== title) parts.push(`title "${before.title}" → "${title}"`);
  if ((before.text || "") !== text) parts.push(`text ${(before.text || "").length} → ${text.length} characters`);
  return parts.length === 0 ? "no change" : parts.join("; ");
}

/** The note's history, newest first: its changes (kept on the note: who, when, what) and the
 * refusals the audit recorded for it. Reads are audited too (so a refusal is), but not shown. */
async function historyOf(n) {
  const denied = await audit.events({ resource: { type: "note", id: n.id }, outcome: "denied", limit: 20 });
  const changes = (n.changes || []).map((c) => ({ ...c, outcome: "completed" }));
  if (n.createdAt) changes.push({ at: n.createdAt, event: "note.create", outcome: "completed", who: n.ownerName || n.owner, change: "created" });
  const refusals = denied.map((e) => ({ at: e.at, event: e.event, outcome: `denied${e.reason ? ` (${e.reason})` : ""}`, who: e.actor ? nameOf(e.actor) : "" }));
  return [...changes, ...refusals].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, 30);
}

app.get("/notes/:id").auth(user).resource(note).allow("notes:read").audit("note.read").handle(async (ctx) => {
  const n = ctx.resource("note");
  const history = await historyOf(n);
  return page(
    n.title,
    ctx.actor,
    html`
      <form method="post" action="/notes/${encodeURIComponent(n.id)}">${csrfField(ctx)}
        <label>Title <input name="title" value="${n.title}" required maxlength="200"></label>
        <label>Text <textarea name="text">${n.text}</textarea></label>
        <button id="save">Save</button>
      </form>
      <h2>History</h2>
      <table id="history"><tr><th>At</th><th>Event</th><th>Outcome</th><th>Who</th><th>Change</th></tr>${history.map(
        (e) =>
          html`
            <tr class="${e.event === "note.create" ? "created" : ""}">
              <td>${e.at}</td>
              <td>${e.event}</td>
              <td class="${e.outcome.startsWith("denied") ? "denied" : ""}">${e.outcome}</td>
              <td>${e.who}</td>
              <td>${e.change || ""}</td>
            </tr>
          `,
      )}</table>
      <h2>Delete</h2>
      <form class="danger" method="post" action="/notes/${encodeURIComponent(n.id)}/delete">${csrfField(ctx)}
        <p class="muted">Deleting removes the note for everyone in this workspace; the audit keeps that it happened.</p>
        <button id="delete">Delete this note</button>
      </form>
    `,
  );
});

app.post("/notes/:id").auth(user).resource(note).csrf().allow("notes:write").audit("note.update").handle(async (ctx, res) => {
  const n = ctx.resource("note");
  const t = title(ctx.body);
  if (!t) return res.status(400).html(page("Not saved", ctx.actor, html`<p>A note needs a title of at most 200 characters.</p>`));
  const text = String(ctx.body.text || "");
  const now = new Date().toISOString();
  await resources.put({
    type: "note",
    id: n.id,
    tenantId: n.tenantId,
    owner: n.owner,
    attributes: {
      title: t,
      text,
      ownerName: n.ownerName,
      createdAt: n.createdAt,
      updatedAt: now,
      // The newest 20 edits, for the history (the audit says that an edit happened, not what it changed).
      changes: [{ at: now, event: "note.update", who: nameOf(ctx.actor), change: changeOf(n, t, text) }, ...(n.changes || [])].slice(0, 20),
    },
  });
  res.redirect(303, `/notes/${encodeURIComponent(n.id)}`);
});

app.post("/notes/:id/delete").auth(user).resource(note).csrf().allow("notes:delete").audit("note.delete").handle(async (ctx, res) => {
  await resources.remove("note", ctx.resource("note").id);
  res.redirect(303, "/notes");
});

// Admins only (policy.yaml): the audit events, newest first, 50 a page (as far back as the
// newest 1,000, which is all audit.events gives at once).
const PAGE = 50;
// Audited, so a refusal shows with `routes audit --outcome denied`.
app.get("/admin/audit").auth(user).allow("audit:read").audit("audit.read").handle(async (ctx) => {
  const q = ctx.request.query;
  const outcome = ["allowed", "denied", "completed", "failed"].find((o) => o === q.outcome);
  const pageNo = Math.min(Math.max(parseInt(String(q.page), 10) || 1, 1), 1000 / PAGE);
  const fetched = await audit.events({ outcome, limit: Math.min(pageNo * PAGE + 1, 1000) });
  const events = fetched.slice((pageNo - 1) * PAGE, pageNo * PAGE);
  const link = (n) => `/admin/audit?${outcome ? `outcome=${outcome}&` : ""}page=${n}`;
  const pager = html`<p class="pager">${pageNo > 1 ? html`<a href="${link(pageNo - 1)}" rel="prev">← newer</a>` : ""}
    <span class="muted">page ${pageNo}</span>
    ${fetched.length > pageNo * PAGE && pageNo < 1000 / PAGE ? html`<a href="${link(pageNo + 1)}" rel="next">older →</a>` : ""}</p>`;
  return page(
    "Audit",
    ctx.actor,
    html`
      <p><a href="/admin/audit">all</a> · <a href="/admin/audit?outcome=denied">denied</a> · <a href="/admin/audit?outcome=failed">failed</a></p>
      <table id="audit"><tr><th>At</th><th>Event</th><th>Outcome</th><th>Who</th><th>Route</th><th>Resource</th><th>Status</th></tr>${events.map(
        (e) =>
          html`
            <tr>
              <td>${e.at}</td>
              <td>${e.event}</td>
              <td class="${e.outcome === "denied" ? "denied" : ""}">${e.outcome}${e.reason ? ` (${e.reason})` : ""}</td>
              <td title="${e.actor ? e.actor.id : ""}">${e.actor ? nameOf(e.actor) : ""}</td>
              <td>${e.method} ${e.pattern}</td>
              <td>${e.resource ? `${e.resource.type || ""} ${e.resource.id}` : ""}</td>
              <td>${e.statusCode}</td>
            </tr>
          `,
      )}</table>
      ${events.length === 0 ? html`<p>No events${outcome ? ` with outcome ${outcome}` : ""} on this page.</p>` : ""}
      ${pager}
    `,
  );
});
