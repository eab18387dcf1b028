// A small route script: `npm run routes -- serve --script examples/routes/hello/app.js --dev`
// Every route declares its plan: public, or authenticated with an action the host authorizes.
const httpmod = require("httpmod");
const { html } = httpmod; // escapes every interpolated value: ?name=<script> shows as text
const { greeting } = require("./lib/greeting.js");

const app = httpmod.app();

app.static("/assets", "public");

app.get("/").public().handle((ctx) => html`<h1>${greeting(ctx.request.query.name || "world")}</h1>`);

app.get("/api/hello/:name").public().handle((ctx, res) => {
  res.json({ message: greeting(ctx.params.name), visits: ctx.request.session && ctx.request.session.isNew ? 1 : "again" });
});

// Needs a bearer access token from the identity provider whose scope grants "notes:read".
app
  .get("/api/me")
  .auth(httpmod.user().required())
  .allow("notes:read")
  .audit("me.read")
  .handle((ctx) => JSON.stringify({ id: ctx.actor.id, kind: ctx.actor.kind }));
