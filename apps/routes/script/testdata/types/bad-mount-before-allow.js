// expect: Property 'mount' does not exist on type 'Policy<
const httpmod = require("httpmod");
httpmod.app().all("/s/*").auth(httpmod.user().required()).mount(require("sessions").handler());
