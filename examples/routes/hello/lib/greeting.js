exports.greeting = (name) => `Hello, ${String(name).replace(/[<>&"]/g, "")}!`;
