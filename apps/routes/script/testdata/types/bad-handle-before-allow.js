// expect: Property 'handle' does not exist on type 'Policy<
const httpmod = require("httpmod");
httpmod.app().get("/a").auth(httpmod.user().required()).handle(() => "x");
