// expect: 'ctx.actor' is possibly 'null'.
const httpmod = require("httpmod");
httpmod.app().get("/a").public().handle((ctx) => ctx.actor.id);
