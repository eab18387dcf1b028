// expect: No overload matches this call.
const httpmod = require("httpmod");
httpmod.app().get("/a").auth({ required: () => ({}) }).allow("x").handle(() => "x");
