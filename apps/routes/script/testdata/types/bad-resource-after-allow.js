// expect: Property 'resource' does not exist on type 'Ready<
const httpmod = require("httpmod");
httpmod.app().get("/n/:id").auth(httpmod.user().required()).allow("read").resource(httpmod.resource("note").idFromParam("id")).handle(() => "x");
