// expect: not assignable to parameter of type 'TemplateStringsArray'.
const httpmod = require("httpmod");
httpmod.app().get("/a").public().handle(() => httpmod.html("<p>x</p>"));
