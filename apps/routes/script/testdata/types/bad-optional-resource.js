// expect: is possibly 'null'.
const httpmod = require("httpmod");
const note = httpmod.resource("note").idFromParam("id");
httpmod.app().get("/n/:id").auth(httpmod.user().required()).resource(note).allow("read").handle((ctx) => ctx.resource("note").title);
