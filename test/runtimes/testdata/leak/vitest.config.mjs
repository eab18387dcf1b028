// A suite that leaves a process behind on purpose, for test/runtimes/leak-check.test.ts.
export default { test: { include: ["leaks.test.mjs"], root: import.meta.dirname } };
