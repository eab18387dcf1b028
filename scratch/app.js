const httpmod = require("httpmod");
const app = httpmod.app();
app.get("/hello").public().handle(() => "hello");
