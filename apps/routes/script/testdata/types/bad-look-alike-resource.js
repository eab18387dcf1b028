// expect: does not exist in type 'ResourceSpec<
const httpmod = require("httpmod");
httpmod.app().get("/a").auth(httpmod.user().required()).resource({ type: "note" }).allow("x").handle(() => "x");
