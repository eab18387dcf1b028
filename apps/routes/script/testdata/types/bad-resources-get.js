// expect: Expected 2 arguments, but got 1.
const httpmod = require("httpmod");
const resources = require("resources");
httpmod.app().get("/a").public().handle(() => resources.get("note"));
