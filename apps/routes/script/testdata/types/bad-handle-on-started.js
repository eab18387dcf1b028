// expect: Property 'handle' does not exist on type 'Started<
const httpmod = require("httpmod");
httpmod.app().get("/a").handle(() => "x");
