// expect: Type '"actor"' is not assignable to type '"ip"'.
const httpmod = require("httpmod");
httpmod.app().get("/a").public().rateLimit({ limit: 5, windowSeconds: 60, key: "actor" }).handle(() => "x");
