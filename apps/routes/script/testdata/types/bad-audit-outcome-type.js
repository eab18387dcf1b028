// expect: Type 'number' is not assignable to type 'string'.
const httpmod = require("httpmod");
const audit = require("audit");
httpmod.app().get("/a").public().handle(async () => (await audit.events({ actor: 42 })).length);
