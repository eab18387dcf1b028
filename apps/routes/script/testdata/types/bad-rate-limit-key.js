// expect: Type '"user"' is not assignable to type 'RateLimitKey | undefined'.
const httpmod = require("httpmod");
httpmod.app().get("/a").auth(httpmod.user().required()).rateLimit({ limit: 5, windowSeconds: 60, key: "user" }).allow("x").handle(() => "x");
