// expect: Property 'csrf' does not exist on type 'Ready<
const httpmod = require("httpmod");
httpmod.app().post("/a").public().csrf().handle(() => "x");
