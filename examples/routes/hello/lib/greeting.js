// Plain text: the page escapes it (html`` in app.js), and JSON needs no escaping.
exports.greeting = (name) => `Hello, ${String(name)}!`;
