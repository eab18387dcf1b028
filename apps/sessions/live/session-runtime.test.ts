import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { memoryFileTree } from "#lib/files";
import { loadQuickJS, type SandboxEngine } from "#lib/sandbox";
import { createInProcessRuntimes } from "./in-process.ts";
import { capability, collect, repl, runFile, sessionSpec, type SpecOverrides } from "./testing.ts";
import { type LiveEvent, LiveRuntimeError, type LiveRuntimeOptions, type LiveRuntimes } from "./types.ts";

let engine: SandboxEngine;
const opened: LiveRuntimes[] = [];
beforeAll(async () => {
  engine = await loadQuickJS();
});
afterEach(async () => {
  for (const r of opened.splice(0)) await r.shutdown();
});

function runtimes(options: Partial<LiveRuntimeOptions> = {}): LiveRuntimes {
  const r = createInProcessRuntimes(engine, { worktrees: memoryFileTree(), ...options });
  opened.push(r);
  return r;
}

/** Opens one session and returns a runner for it. */
async function session(overrides: SpecOverrides = {}, options: Partial<LiveRuntimeOptions> = {}) {
  const r = runtimes(options);
  const spec = sessionSpec(overrides);
  await r.open(spec);
  return {
    runtimes: r,
    id: spec.sessionId,
    run: (request: Parameters<typeof repl>[0] | ReturnType<typeof runFile>) =>
      collect(r, spec.sessionId, typeof request === "string" ? repl(request) : request),
  };
}

describe("REPL executions", () => {
  it("emits input_echo, console and value events and returns the outcome", async () => {
    const s = await session();
    const { outcome, events } = await s.run("console.log('hi', {a: 1}); console.warn('careful'); 1 + 1");
    expect(events).toEqual([
      { type: "input_echo", payload: { text: "console.log('hi', {a: 1}); console.warn('careful'); 1 + 1" } },
      { type: "console", payload: { level: "log", text: "hi { a: 1 }" } },
      { type: "console", payload: { level: "warn", text: "careful" } },
      { type: "value", payload: { type: "number", preview: "2", json: 2 } },
    ]);
    expect(outcome).toMatchObject({ status: "ok", result: { type: "number", preview: "2", json: 2 }, metrics: { events: 4, output_bytes: 18 } });
    expect(outcome.metrics.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("keeps state between inputs and supports top-level await", async () => {
    const s = await session();
    await s.run("let count = 1; function inc() { return ++count }");
    await s.run("const later = await Promise.resolve(40)");
    const { outcome } = await s.run("inc() + later");
    expect(outcome.result?.json).toBe(42);
  });

  it("reports a throw as status error with an exception event", async () => {
    const s = await session();
    const { outcome, events } = await s.run("null.x");
    expect(outcome.status).toBe("error");
    expect(outcome.error?.message).toMatch(/cannot read property/i);
    expect(events[1]).toEqual({ type: "exception", payload: { message: outcome.error!.message, stack: outcome.error!.stack } });
    expect((await s.run("'still usable'")).outcome.status).toBe("ok");
  });

  // How soon after cpu_ms it ends is lib/sandbox's test, on a clock of its own (limits.test.ts).
  it("ends an infinite loop as timeout at cpu_ms, then answers normally", async () => {
    const s = await session({ settings: { limits: { cpu_ms: 100 } } });
    const { outcome, events } = await s.run("while (true) {}");
    expect(outcome).toMatchObject({ status: "timeout", limit: "cpu_ms" });
    expect(outcome.metrics.duration_ms).toBeGreaterThanOrEqual(100);
    expect(events.at(-1)).toEqual({ type: "system", payload: { message: "execution timed out (cpu_ms limit of 100 ms)", level: "error" } });
    expect(outcome.metrics.events).toBe(2);
    expect((await s.run("6 * 7")).outcome.result?.json).toBe(42);
  });

  it("ends a memory bomb as error and leaves another session unaffected", async () => {
    const bomb = await session({ settings: { limits: { mem_mb: 16 } } });
    const other = await session();
    await other.run("var kept = 'intact'");
    const { outcome, events } = await bomb.run("const a = []; while (true) a.push(new Array(100000).fill(1))");
    expect(outcome).toMatchObject({ status: "error", limit: "memory" });
    expect(outcome.error?.message).toBe("out of memory");
    expect(events.map((e) => e.type)).toEqual(["input_echo", "exception"]);
    expect((await other.run("kept")).outcome.result?.json).toBe("intact");
    expect((await bomb.run("1")).outcome.status).toBe("ok");
  });

  it("stops an output flood at max_events, counting input_echo, with the events up to the limit", async () => {
    const s = await session({ settings: { limits: { max_events: 5 } } });
    const { outcome, events } = await s.run("for (let i = 0; ; i++) console.log(i)");
    expect(outcome).toMatchObject({ status: "limit_exceeded", limit: "max_events", metrics: { events: 5 } });
    expect(events.map((e) => e.type)).toEqual(["input_echo", "console", "console", "console", "console"]);
    expect(events.slice(1).map((e) => e.payload.text)).toEqual(["0", "1", "2", "3"]);
  });

  it("stops output past max_output_kb", async () => {
    const s = await session({ settings: { limits: { max_output_kb: 1 } } });
    const { outcome, events } = await s.run("for (;;) console.log('x'.repeat(300))");
    expect(outcome).toMatchObject({ status: "limit_exceeded", limit: "max_output_kb" });
    expect(events.filter((e) => e.type === "console")).toHaveLength(3);
    expect(outcome.metrics.output_bytes).toBe(900);
  });

  it("a timeout leaves no room for its system event when the events are used up", async () => {
    const s = await session({ settings: { limits: { max_events: 2, cpu_ms: 50 } } });
    const { outcome, events } = await s.run("console.log('one'); for (;;) {}");
    expect(outcome.status).toBe("timeout");
    expect(events.map((e) => e.type)).toEqual(["input_echo", "console"]);
  });

  it("console false makes console a no-op; strict mode applies", async () => {
    const quiet = await session({ settings: { runtime: { console: false } } });
    expect((await quiet.run("console.log('x'); 1")).events.map((e) => e.type)).toEqual(["input_echo", "value"]);
    const strict = await session({ settings: { runtime: { strict: true } } });
    expect((await strict.run("undeclared = 1")).outcome.status).toBe("error");
    const sloppy = await session();
    expect((await sloppy.run("undeclared = 1")).outcome.status).toBe("ok");
  });

  it("answers SESSION_BUSY while an execution runs, SESSION_NOT_LIVE for unknown or closed ids", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slowFetch = (async () => {
      await gate;
      return new Response("done");
    }) as typeof fetch;
    const s = await session({ modules: ["http"], capabilities: [capability("net", "example.test")] }, { fetch: slowFetch });
    const first = s.run("(await require('http').fetch('http://example.test/')).body");
    await new Promise((r) => setTimeout(r, 20));
    await expect(s.run("1")).rejects.toMatchObject({ code: "SESSION_BUSY" });
    release();
    expect((await first).outcome.result?.json).toBe("done");
    await expect(collect(s.runtimes, "nope", repl("1"))).rejects.toMatchObject({ code: "SESSION_NOT_LIVE" });
    await s.runtimes.close(s.id);
    expect(s.runtimes.liveIds()).toEqual([]);
    await expect(s.run("1")).rejects.toBeInstanceOf(LiveRuntimeError);
  });
});

describe("run-file executions", () => {
  it("echoes the path, sees args and env for that run only", async () => {
    const s = await session({ capabilities: [capability("env", "APP_*")] }, { hostEnv: { APP_MODE: "test", SECRET: "no" } });
    const { outcome, events } = await s.run(
      runFile("bin/main.js", "console.log(args.n, env.APP_MODE, env.EXTRA, typeof env.SECRET)", { n: 3 }, { EXTRA: "x" }),
    );
    expect(events[0]).toEqual({ type: "input_echo", payload: { path: "bin/main.js" } });
    expect(events[1]!.payload.text).toBe("3 test x undefined");
    expect(outcome).toMatchObject({ status: "ok" });
    // The file's completion value, as for a REPL input (console.log returns undefined).
    expect(outcome.result).toEqual({ type: "undefined", preview: "undefined" });
    expect(events.map((e) => e.type)).toEqual(["input_echo", "console", "value"]);
    expect((await s.run("[typeof args, typeof env]")).outcome.result?.json).toEqual(["undefined", "undefined"]);
  });

  it("shares the session's global scope in script mode, and names the file in stacks", async () => {
    const s = await session();
    await s.run(runFile("lib.js", "var fromFile = 5;"));
    expect((await s.run("fromFile")).outcome.result?.json).toBe(5);
    const { outcome } = await s.run(runFile("bad.js", "\n\nthrow new Error('boom')"));
    expect(outcome.error?.stack).toContain("/bad.js:3");
  });
});

describe("libraries and startup files", () => {
  it("loads libraries into the global scope, then runs startup files in order", async () => {
    const s = await session({
      libraries: [{ name: "greet.js", source: "function greet(n) { return 'hi ' + n }" }],
      startupFiles: [
        { path: "a.js", order_index: 0, source: "var order = ['a', greet('a')]" },
        { path: "b.js", order_index: 1, source: "order.push('b')" },
      ],
    });
    expect((await s.run("order")).outcome.result?.json).toEqual(["a", "hi a", "b"]);
  });

  it.each([
    ["a throw", "throw new TypeError('bad setup')", /startup file "boot\.js" failed: TypeError: bad setup/],
    ["a timeout", "for (;;) {}", /startup file "boot\.js" failed: timed out \(cpu_ms/],
    ["a limit", "for (;;) console.log(1)", /startup file "boot\.js" failed: event limit exceeded/],
  ])("fails with STARTUP_FAILED on %s, leaving nothing alive", async (_name, source, message) => {
    const r = runtimes();
    // max_events small enough that the event flood reaches it long before cpu_ms, even on a slow machine.
    const spec = sessionSpec({ settings: { limits: { cpu_ms: 50, max_events: 20 } }, startupFiles: [{ path: "boot.js", order_index: 0, source }] });
    const err = await r.open(spec).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LiveRuntimeError);
    expect(err).toMatchObject({ code: "STARTUP_FAILED", message: expect.stringMatching(message) });
    expect(r.liveIds()).toEqual([]);
  });

  it("a failing library names the library", async () => {
    const r = runtimes();
    await expect(r.open(sessionSpec({ libraries: [{ name: "broken.js", source: "syntax error here" }] }))).rejects.toMatchObject({
      code: "STARTUP_FAILED",
      message: expect.stringContaining('library "broken.js" failed: SyntaxError'),
    });
  });
});

describe("modules and capabilities", () => {
  it("only modules the template added are requirable", async () => {
    const s = await session({ modules: ["path"] });
    expect((await s.run("require('path').join('a', '..', 'b')")).outcome.result?.json).toBe("b");
    // A catalog module says how to enable it (test/contract/sessions-sandbox.test.ts has the words); others are Node's message.
    for (const name of ["fs", "http", "env"]) {
      expect((await s.run(`require(${JSON.stringify(name)})`)).outcome.error?.message).toMatch(
        new RegExp(`^Cannot find module '${name}': the module "${name}" is not enabled for this session's template`),
      );
    }
    for (const name of ["node:fs", "child_process"]) {
      expect((await s.run(`require(${JSON.stringify(name)})`)).outcome.error?.message).toBe(`Cannot find module '${name}'`);
    }
  });

  it("a disabled module capability withdraws the module; a global capability exposes one", async () => {
    const s = await session({ modules: ["path", "env"], capabilities: [capability("module", "env", {}, false), capability("global", "path")] });
    expect((await s.run("typeof require('env')")).outcome.status).toBe("error");
    expect((await s.run("path.basename('/a/b.txt', '.txt')")).outcome.result?.json).toBe("b");
  });

  it("refuses a module outside the deployment's catalog and a global without its module", async () => {
    const r = runtimes({ modules: ["path"] });
    await expect(r.open(sessionSpec({ modules: ["fs"] }))).rejects.toMatchObject({ code: "STARTUP_FAILED", message: expect.stringContaining('"fs"') });
    await expect(r.open(sessionSpec({ capabilities: [capability("global", "path")] }))).rejects.toMatchObject({ code: "STARTUP_FAILED" });
  });

  it("the env module shows exactly the variables env capabilities allow", async () => {
    const s = await session({ modules: ["env"], capabilities: [capability("env", "HOME"), capability("env", "APP_*"), capability("env", "OFF", {}, false)] }, {
      hostEnv: { HOME: "/h", APP_A: "1", APP_B: "2", OFF: "x", PATH: "/bin" },
    });
    expect((await s.run("({...require('env')})")).outcome.result?.json).toEqual({ HOME: "/h", APP_A: "1", APP_B: "2" });
    expect((await s.run("Object.isFrozen(require('env'))")).outcome.result?.json).toBe(true);
  });

  it("fs reads the worktree and writes only where an fs capability allows", async () => {
    const tree = memoryFileTree({ "work/tree/data/in.txt": "hello" });
    const s = await session({ modules: ["fs"], capabilities: [capability("fs", "out")] }, { worktrees: tree });
    expect((await s.run("await require('fs').readFile('data/in.txt')")).outcome.result?.json).toBe("hello");
    expect((await s.run("await require('fs').writeFile('out/x.txt', 'ok'); await require('fs').readdir('out')")).outcome.result?.json).toEqual(["x.txt"]);
    const denied = await s.run("await require('fs').writeFile('data/in.txt', 'changed')");
    expect(denied.outcome.status).toBe("error");
    expect(denied.outcome.error?.message).toMatch(/^EPERM/);
    expect(await tree.readText("/work/tree", "data/in.txt")).toBe("hello");
    const readOnly = await session({ modules: ["fs"] }, { worktrees: tree });
    expect((await readOnly.run("await require('fs').mkdir('new')")).outcome.error?.message).toMatch(/^EPERM/);
  });
});

describe("worktree imports", () => {
  const files = {
    "work/tree/main.js": "const u = require('./lib/util'); module.exports = u.twice(21);",
    "work/tree/lib/util.js": "exports.twice = (x) => x * 2; exports.name = require('helpers/name').name;",
    "work/tree/src/helpers/name.js": "exports.name = 'from roots';",
    "work/tree/esm/main.mjs": "import { twice } from './math.mjs'; import * as p from 'path'; globalThis.esmResult = [twice(2), p.join('a', 'b')];",
    "work/tree/esm/math.mjs": "export const twice = (x) => x * 2;",
  };

  it("require resolves relative paths, extensions and roots (CommonJS)", async () => {
    const s = await session({ settings: { resolver: { roots: ["src"] } } }, { worktrees: memoryFileTree(files) });
    expect((await s.run("require('./main')")).outcome.result?.json).toBe(42);
    expect((await s.run("require('./lib/util.js').name")).outcome.result?.json).toBe("from roots");
    expect((await s.run("require('./nope')")).outcome.error?.message).toBe("Cannot find module './nope'");
  });

  it("absolute imports need allow_absolute_repo_imports", async () => {
    const off = await session({}, { worktrees: memoryFileTree(files) });
    expect((await off.run("require('/lib/util').twice(1)")).outcome.error?.message).toMatch(/absolute imports are not allowed/);
    const on = await session({ settings: { resolver: { allow_absolute_repo_imports: true, roots: ["src"] } } }, { worktrees: memoryFileTree(files) });
    expect((await on.run("require('/lib/util').twice(1)")).outcome.result?.json).toBe(2);
  });

  it("esm evaluates run-file and startup files as modules with imports", async () => {
    const tree = memoryFileTree(files);
    const s = await session(
      {
        modules: ["path"],
        settings: { runtime: { esm: true } },
        startupFiles: [{ path: "esm/main.mjs", order_index: 0, source: files["work/tree/esm/main.mjs"] }],
      },
      { worktrees: tree },
    );
    expect((await s.run("esmResult")).outcome.result?.json).toEqual([4, "a/b"]);
    const r = await s.run(runFile("esm/run.mjs", "import { twice } from './math.mjs'; console.log(twice(args.n)); await 0;", { n: 5 }));
    expect(r.events[1]!.payload.text).toBe("10");
    expect((await s.run("(await import('./esm/math.mjs')).twice(8)")).outcome.result?.json).toBe(16);
  });

  it("does not follow imports outside the worktree", async () => {
    const s = await session({ settings: { resolver: { roots: ["..", "/etc"] } } }, {
      worktrees: memoryFileTree({ "work/secret.js": "exports.s = 1", ...files }),
    });
    expect((await s.run("require('../secret')")).outcome.error?.message).toBe("Cannot find module '../secret'");
    expect((await s.run("require('secret')")).outcome.error?.message).toBe("Cannot find module 'secret'");
    expect((await s.run("require('./lib/../../secret')")).outcome.status).toBe("error");
  });
});

describe("timers and cancel", () => {
  it("an execution waits for its timers; their output follows the value", async () => {
    const s = await session();
    const { outcome, events } = await s.run("setTimeout(() => console.log('later'), 5); 'now'");
    expect(outcome.status).toBe("ok");
    expect(events.map((e) => e.type)).toEqual(["input_echo", "value", "console"]);
  });

  it("cancel ends an execution waiting on a timer: status cancelled, a closing system event, the session usable", async () => {
    const s = await session();
    const events: LiveEvent[] = [];
    let cancelled: Promise<boolean> | undefined;
    const outcome = await s.runtimes.execute(s.id, repl("console.log('waiting'); setInterval(() => {}, 1000); await new Promise(() => {})"), (e) => {
      events.push(e);
      // Once the code's slice has ended: it then waits on its promise, with the interval pending.
      if (e.type === "console") cancelled = new Promise((r) => setTimeout(r, 0)).then(() => s.runtimes.cancel(s.id));
    });
    expect(await cancelled).toBe(true);
    expect(outcome.status).toBe("cancelled");
    expect(events.at(-1)).toEqual({ type: "system", payload: { message: "execution cancelled; 1 pending timer cleared", level: "warn" } });
    expect(await s.runtimes.cancel(s.id)).toBe(false); // nothing runs now
    expect((await s.run("1 + 1")).outcome.result?.json).toBe(2);
  });
});
