// expect: Property 'name' does not exist on type '{ readonly id: string; }'.
const httpmod = require("httpmod");
httpmod.app().get("/n/:id").public().handle((ctx) => ctx.params.name);
