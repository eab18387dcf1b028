// expect: Expected 1 arguments, but got 2.
const httpmod = require("httpmod");
httpmod.app().get("/a", () => "x");
