// expect: Property 'stauts' does not exist on type 'Response'.
const httpmod = require("httpmod");
httpmod.app().get("/a").public().handle((_ctx, res) => res.stauts(404).send("x"));
