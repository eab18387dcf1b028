import { describe, expect, it } from "vitest";
import { memoryFileTree } from "#lib/files";
import { assertNoLeaks, loadDebugQuickJS } from "#lib/sandbox/debug";
import { createInProcessRuntimes } from "./in-process.ts";
import { capability, collect, repl, runFile, sessionSpec } from "./testing.ts";

describe("a session frees everything on close (debug-sync variant)", () => {
  it("after open, a mixed workload, and close", async () => {
    const engine = await loadDebugQuickJS();
    const worktrees = memoryFileTree({
      "w/lib/util.js": "exports.twice = (x) => x * 2;",
      "w/esm/m.mjs": "export const v = 1;",
      "w/data.txt": "text",
    });
    const fetch = (async () => new Response("body")) as typeof globalThis.fetch;
    const runtimes = createInProcessRuntimes(engine, { worktrees, fetch, hostEnv: { APP_A: "1" } });
    const spec = sessionSpec({
      worktreePath: "/w",
      modules: ["fs", "path", "http", "env"],
      capabilities: [capability("fs", "out"), capability("net", "example.test"), capability("env", "APP_*"), capability("global", "path")],
      libraries: [{ name: "lib.js", source: "function helper() { return 1 }" }],
      startupFiles: [{ path: "init.js", order_index: 0, source: "var started = require('./lib/util').twice(helper())" }],
      settings: { limits: { cpu_ms: 100, max_events: 20 } },
    });
    await runtimes.open(spec);
    const inputs = [
      "console.log('a', {b: [1]}); started",
      "await require('fs').readFile('data.txt')",
      "await require('fs').writeFile('out/x.txt', 'y')",
      "(await require('http').fetch('http://example.test/')).body",
      "require('env').APP_A + path.join('a', 'b')",
      "(await import('./esm/m.mjs')).v",
      "throw new Error('e')",
      "while (true) {}",
      "for (;;) console.log(1)",
      "require('./nope')",
    ];
    for (const input of inputs) await collect(runtimes, spec.sessionId, repl(input));
    await collect(runtimes, spec.sessionId, runFile("main.js", "console.log(args.n, env.APP_A, require('./lib/util.js').twice(2))", { n: 1 }, { X: "y" }));
    await runtimes.close(spec.sessionId);
    const failing = sessionSpec({ worktreePath: "/w", startupFiles: [{ path: "bad.js", order_index: 0, source: "throw 1" }] });
    await expect(runtimes.open(failing)).rejects.toMatchObject({ code: "STARTUP_FAILED" });
    expect(() => assertNoLeaks(engine)).not.toThrow();
  });
});
