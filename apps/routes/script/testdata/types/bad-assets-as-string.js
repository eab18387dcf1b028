// expect: not assignable to parameter of type 'AssetsModule'.
const httpmod = require("httpmod");
httpmod.app().staticFromAssetsModule("/ui", "dist", "/");
