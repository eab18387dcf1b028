// expect: Object literal may only specify known properties
const httpmod = require("httpmod");
httpmod.app().spaFromAssetsModule("/", require("fs:assets"), "/", { idx: "index.html" });
