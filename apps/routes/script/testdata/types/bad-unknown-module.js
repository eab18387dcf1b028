// expect: Cannot find module 'httpmodd'
const httpmod = require("httpmodd");
httpmod.app();
