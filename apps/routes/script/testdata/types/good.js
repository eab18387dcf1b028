// Type-checks with httpmod.d.ts: every stage, ctx, request, response and the host's modules used as documented.
const httpmod = require("httpmod");
const resources = require("resources");
const audit = require("audit");
const { html, raw } = httpmod;

const app = httpmod.app();
const user = httpmod.user().required();
const maybe = httpmod.user();
const note = httpmod.resource("note").idFromParam("id").tenantFromParam("tenant").mustExist();
const tag = httpmod.resource("tag").idFromParam("tag");

app.mount("/idp", require("idp").handler(), { stripPrefix: true, excludePrefixes: ["/idp/debug"] }).static("/static", "public");
app.staticFromAssetsModule("/ui", require("fs:assets"), "/app/public");
app.spaFromAssetsModule("/", require("assets"), "/dist", { index: "index.html", excludePrefixes: ["/api"] });
app.all("/sessions/*").auth(user).allow("sessions:use").audit("sessions.api").mount(require("sessions").handler(), { stripPrefix: true });

app.get("/").public().handle(() => html`<h1>${"<hi>"}</h1>${raw("<br>")}`);
app.get("/hello/:name").public().audit("hello").handle((ctx, res) => {
  const name = ctx.params.name;
  const q = ctx.request.query.q;
  res.status(200).set("X-Name", name).type("text/plain").send(`${name} ${typeof q === "string" ? q : ""} ${ctx.request.headers["user-agent"] ?? ""}`);
});
app.post("/t/:tenant/notes/:id/tags/:tag").auth(user).resource(note).resource(tag).csrf().allow("notes:write").audit("note.tag")
  .handle(async (ctx, res) => {
    const n = ctx.resource("note");
    const t = ctx.resource("tag");
    const stored = await resources.put({ type: "note", id: n.id, tenantId: ctx.params.tenant, attributes: { title: n.title, tag: t ? t.id : null } });
    const events = await audit.events({ resource: { type: "note", id: stored.id }, outcome: "denied", limit: 5 });
    res.status(201).json({ by: ctx.actor.id, kind: ctx.actor.kind, events: events.map((e) => e.at), token: ctx.csrfToken, action: ctx.action });
  });
app.get("/whoami").auth(maybe).allow("me:read").handle((ctx) => (ctx.actor ? ctx.actor.id : "nobody"));
app.route("PROPFIND", "/dav/*").public().handle((_ctx, res) => res.redirect(301, "/"));
app.delete("/x").auth(user).allow("x:delete").handle(async (ctx, res) => {
  const gone = await resources.remove("note", String(ctx.body.id));
  const list = await resources.list("note", { limit: 10 });
  res.json({ gone, count: list.length, session: ctx.request.session ? ctx.request.session.isNew : null });
});
app.get("/limited").auth(user).rateLimit({ limit: 10, windowSeconds: 60, key: "actor" }).allow("x").handle(() => "limited");
app.get("/ping").public().rateLimit({ limit: 100, windowSeconds: 60, key: "ip" }).handle(() => "pong");
