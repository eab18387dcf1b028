import { describe, expect, it } from "vitest";
import { createSandbox, type EvaluateOptions, type HostValue, type Sandbox, SandboxBusyError, SandboxDisposedError, type SandboxEvent } from "./index.ts";
import { sandboxesPerTest } from "./testing.ts";

const { sandbox, engine } = sandboxesPerTest();

async function run(s: Sandbox, code: string, options: EvaluateOptions = {}) {
  const events: SandboxEvent[] = [];
  const result = await s.evaluate(code, { ...options, onEvent: (e) => events.push(e) });
  return { result, events };
}

describe("evaluate", () => {
  it("sets itself up before the first code runs, not at creation (idle sandboxes stay small)", async () => {
    const s = sandbox();
    const idle = s.memoryUsage();
    const { result, events } = await run(s, "typeof console.log + ' ' + typeof require");
    expect(result.status).toBe("ok");
    expect(events[0]).toMatchObject({ payload: { json: "function function" } });
    expect(s.memoryUsage()).toBeGreaterThan(idle + 4096); // the bootstrap's captured built-ins, console, require
  });

  it("reports the completion value with type, preview and json", async () => {
    const s = sandbox();
    const { result, events } = await run(s, "1+1");
    expect(result).toMatchObject({ status: "ok", value: { type: "number", preview: "2", json: 2 }, events: 1, outputBytes: 0 });
    expect(events).toEqual([{ type: "value", payload: { type: "number", preview: "2", json: 2 } }]);
  });

  it.each([
    ["'hi'", { type: "string", preview: "'hi'", json: "hi" }],
    ["true", { type: "boolean", preview: "true", json: true }],
    ["undefined", { type: "undefined", preview: "undefined" }],
    ["null", { type: "null", preview: "null", json: null }],
    ["({x: 1, y: [1, 'a']})", { type: "object", preview: "{ x: 1, y: [ 1, 'a' ] }", json: { x: 1, y: [1, "a"] } }],
    ["[1, 2]", { type: "array", preview: "[ 1, 2 ]", json: [1, 2] }],
    ["(function foo() {})", { type: "function", preview: "[Function: foo]" }],
    ["10n", { type: "bigint", preview: "10n" }],
    ["Symbol('s')", { type: "symbol", preview: "Symbol(s)" }],
    ["NaN", { type: "number", preview: "NaN" }],
    ["-0", { type: "number", preview: "-0", json: -0 }],
    ["new Map([[1, 'a']])", { type: "object", preview: "Map(1) { 1 => 'a' }", json: {} }],
    ["new Uint8Array([1, 2])", { type: "object", preview: "Uint8Array(2) [ 1, 2 ]", json: { 0: 1, 1: 2 } }],
    ["new Promise(() => {})", { type: "promise", preview: "Promise { <pending> }" }],
  ])("describes %s", async (code, value) => {
    const { result } = await run(sandbox(), code);
    expect(result.status).toBe("ok");
    expect(result.value).toEqual(value);
  });

  it("keeps var, function, let, const and class declarations between evaluations", async () => {
    const s = sandbox();
    expect((await run(s, "var a = 1; function f() { return 2 }; let b = 3; const c = 4; class K { static v = 5 }")).result.status).toBe("ok");
    expect((await run(s, "a + f() + b + c + K.v")).result.value?.json).toBe(15);
    // QuickJS keeps global let/const in the global lexical scope: redeclaring is a SyntaxError.
    expect((await run(s, "let b = 9")).result).toMatchObject({ status: "error", error: { name: "SyntaxError" } });
  });

  it("supports top-level await, and its declarations persist", async () => {
    const s = sandbox();
    expect((await run(s, "await Promise.resolve(5)")).result.value?.json).toBe(5);
    expect((await run(s, "const x = await Promise.resolve(6); let y = 1; x")).result.value?.json).toBe(6);
    expect((await run(s, "x + y")).result.value?.json).toBe(7);
  });

  it("awaits a promise completion value and runs .then callbacks", async () => {
    const s = sandbox();
    const { result, events } = await run(s, "Promise.resolve(1).then(v => { console.log('then', v); return v + 1 })");
    expect(result.value?.json).toBe(2);
    expect(events.map((e) => e.type)).toEqual(["console", "value"]);
  });

  it("reports a rejected completion promise as an error", async () => {
    const { result, events } = await run(sandbox(), "Promise.reject(new RangeError('nope'))");
    expect(result).toMatchObject({ status: "error", error: { name: "RangeError", message: "nope" } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "exception", payload: { message: "nope" } });
  });

  it("reports throws, including non-Error values", async () => {
    const s = sandbox();
    const a = await run(s, "throw new TypeError('bad')");
    expect(a.result.status).toBe("error");
    expect(a.result.error).toMatchObject({ name: "TypeError", message: "bad" });
    expect(a.result.error?.stack).toMatch(/^TypeError: bad\n {4}at <eval> \(<repl>:1/);
    const b = await run(s, "throw 42");
    expect(b.result.error).toMatchObject({ message: "42" });
    const c = await run(s, "throw {code: 1}");
    expect(c.result.error).toMatchObject({ message: "{ code: 1 }" });
    const d = await run(s, "1 +", { filename: "input.js" });
    expect(d.result.error).toMatchObject({ name: "SyntaxError" });
    expect(d.result.error?.stack).toContain("input.js");
  });

  it("script mode emits no value event", async () => {
    const s = sandbox();
    const { result, events } = await run(s, "console.log('hi'); 42", { mode: "script" });
    expect(result.status).toBe("ok");
    expect(result.value).toBeUndefined();
    expect(events).toEqual([{ type: "console", payload: { level: "log", text: "hi" } }]);
  });

  it("setGlobal injects copied data and host functions", async () => {
    const s = sandbox({ globals: { args: ["a", "b"] } });
    s.setGlobal("env", { HOME: "/home/x" });
    s.setGlobal("twice", (n) => (n as number) * 2);
    expect((await run(s, "args.join(',') + env.HOME + twice(21)")).result.value?.json).toBe("a,b/home/x42");
    s.setGlobal("args", [1]);
    expect((await run(s, "args")).result.value?.json).toEqual([1]);
  });

  it("loadLibrary evaluates into the global scope", async () => {
    const s = sandbox();
    const r = await s.loadLibrary("lib/left-pad.js", "function leftPad(s, n) { return String(s).padStart(n, ' ') }");
    expect(r.status).toBe("ok");
    expect((await run(s, "leftPad('x', 3)")).result.value?.json).toBe("  x");
    const bad = await s.loadLibrary("lib/bad.js", "throw new Error('broken lib')");
    expect(bad.error?.stack).toContain("lib/bad.js");
  });

  it("call() invokes a global function with copied arguments and awaits it", async () => {
    const s = sandbox();
    await s.evaluate("async function handle(req) { return { status: 200, body: req.path.toUpperCase() } }");
    const r = await s.call("handle", [{ path: "/x" }]);
    expect(r).toMatchObject({ status: "ok", value: { json: { status: 200, body: "/X" } } });
    expect((await s.call("nothere")).error?.message).toBe("nothere is not a function");
  });

  it("evaluateSync works for synchronous code", () => {
    const s = sandbox();
    expect(s.evaluateSync("6 * 7").value?.json).toBe(42);
    expect(s.evaluateSync("Promise.resolve(1)").value?.json).toBe(1);
  });

  it("strict option evaluates in strict mode", async () => {
    const s = sandbox({ strict: true });
    expect((await run(s, "undeclared = 1")).result).toMatchObject({ status: "error", error: { name: "ReferenceError" } });
    const loose = sandbox();
    expect((await run(loose, "undeclared = 1")).result.status).toBe("ok");
  });

  it("refuses source nested deeper than the parser can survive", async () => {
    const s = sandbox();
    const { result } = await run(s, "(".repeat(2000) + "1" + ")".repeat(2000));
    expect(result).toMatchObject({ status: "error", error: { name: "SyntaxError" } });
    expect((await run(s, "1+1")).result.value?.json).toBe(2);
  });
});

describe("console", () => {
  it("formats arguments like util.inspect, joined by one space", async () => {
    const { events } = await run(sandbox(), `console.log("a", 1, {x:1}, [1,2], null, undefined, ["q"], {s: 'x'}, new Error("e").message)`);
    expect(events[0]).toEqual({ type: "console", payload: { level: "log", text: "a 1 { x: 1 } [ 1, 2 ] null undefined [ 'q' ] { s: 'x' } e" } });
  });

  it("maps each level", async () => {
    const { events } = await run(sandbox(), "console.log(1); console.info(2); console.warn(3); console.error(4); console.debug(5)", { mode: "script" });
    expect(events.map((e) => (e.type === "console" ? e.payload.level : ""))).toEqual(["log", "info", "warn", "error", "debug"]);
  });

  it("supports format specifiers, cycles, getters and depth", async () => {
    const { events } = await run(
      sandbox(),
      `const o = { get g() { throw new Error('never called') }, d: { e: { f: { g: 1 } } } }; o.self = o;
       console.log("%s=%d%%", "n", 42, o)`,
      { mode: "script" },
    );
    expect(events[0]).toMatchObject({ payload: { text: "n=42% { g: [Getter], d: { e: { f: [Object] } }, self: [Circular] }" } });
  });

  it("counts UTF-8 bytes of console text", async () => {
    const { result } = await run(sandbox(), "console.log('é€😀')", { mode: "script" });
    expect(result.outputBytes).toBe(2 + 3 + 4);
  });

  it("console: false discards output", async () => {
    const { result, events } = await run(sandbox({ console: false }), "console.log('x'); 1");
    expect(result.status).toBe("ok");
    expect(events).toEqual([{ type: "value", payload: { type: "number", preview: "1", json: 1 } }]);
  });
});

describe("modules", () => {
  const fs = {
    functions: {
      readFile(path: HostValue) {
        if (path === "/secret") throw Object.assign(new Error("EACCES: permission denied, open '/secret'"), { code: "EACCES" });
        return `content of ${String(path)}`;
      },
      bytes: () => new Uint8Array([1, 2, 3]),
      size: (data: HostValue) => (data as Uint8Array).byteLength,
      echo: (v: HostValue) => v,
      bad: () =>
        new (class Point {
          x = 1;
        })() as unknown as string,
    },
    values: { sep: "/" },
  };

  it("exposes functions and values through require", async () => {
    const s = sandbox({ modules: { fs } });
    expect((await run(s, "const fs = require('fs'); fs.readFile('a.txt') + fs.sep")).result.value?.json).toBe("content of a.txt/");
    expect((await run(s, "require('fs') === require('fs')")).result.value?.json).toBe(true);
    expect((await run(s, "fs.echo({a: [1, {b: null}]})")).result.value?.json).toEqual({ a: [1, { b: null }] });
    expect((await run(s, "Array.from(fs.bytes())")).result.value?.json).toEqual([1, 2, 3]);
    expect((await run(s, "fs.size(new Uint8Array(5))")).result.value?.json).toBe(5);
  });

  it("turns host errors into sandbox errors without host stacks", async () => {
    const s = sandbox({ modules: { fs } });
    const { result } = await run(s, "require('fs').readFile('/secret')");
    expect(result.status).toBe("error");
    expect(result.error?.message).toBe("EACCES: permission denied, open '/secret'");
    expect(result.error?.stack).not.toMatch(/node_modules|lib\/sandbox|\.ts|file:/);
    expect((await run(s, "try { require('fs').readFile('/secret') } catch (e) { e.code }")).result.value?.json).toBe("EACCES");
    const bad = await run(s, "require('fs').bad()");
    expect(bad.result.error?.name).toBe("TypeError");
  });

  it("refuses unknown modules with a clear error", async () => {
    const { result } = await run(sandbox({ modules: { fs } }), "require('child_process')");
    expect(result.error).toMatchObject({ message: "Cannot find module 'child_process'" });
  });

  it("refuses arguments that cannot be copied", async () => {
    const { result } = await run(sandbox({ modules: { fs } }), "require('fs').echo(() => 1)");
    expect(result.error?.name).toBe("TypeError");
  });

  it("values nested deeper than 64 cross the boundary in neither direction as data", async () => {
    const s = sandbox({ modules: { fs } });
    const build = (depth: number) => `(() => { let a = []; for (let i = 1; i < ${depth}; i++) a = [a]; return a; })()`;
    // A completion value: json up to 64 levels, only the preview beyond.
    expect((await run(s, build(64))).result.value?.json).toBeDefined();
    for (const depth of [65, 3000]) {
      const { result } = await run(s, build(depth));
      expect(result.status).toBe("ok");
      expect(result.value?.json).toBeUndefined();
      expect(result.value?.preview).toMatch(/^\[ \[ \[/);
    }
    // A host function's argument.
    expect((await run(s, `require('fs').echo(${build(64)}).length`)).result.value?.json).toBe(1);
    const { result } = await run(s, `require('fs').echo(${build(3000)})`);
    expect(result.status).toBe("error");
    expect(result.error?.message).toMatch(/nested deeper than 64 levels/);
    // A host value for the sandbox.
    let deep: unknown = [];
    for (let i = 1; i < 3000; i++) deep = [deep];
    const returns = sandbox({ modules: { deep: { functions: { get: () => deep as HostValue } } } });
    const back = await run(returns, "require('deep').get()");
    expect(back.result.status).toBe("error");
    expect(back.result.error?.message).toMatch(/nested deeper than 64 levels/);
  });

  it("host promises become sandbox promises", async () => {
    const http = {
      functions: {
        fetch: async (url: HostValue) => {
          await new Promise((r) => setTimeout(r, 10));
          if (url === "bad") throw new Error("ECONNREFUSED");
          return { status: 200, url: url as string };
        },
      },
    };
    const s = sandbox({ modules: { http } });
    expect((await run(s, "(await require('http').fetch('u')).url")).result.value?.json).toBe("u");
    expect((await run(s, "require('http').fetch('u2').then(r => r.status)")).result.value?.json).toBe(200);
    const all = await run(s, "const h = require('http'); (await Promise.all([h.fetch('a'), h.fetch('b')])).map(r => r.url).join()");
    expect(all.result.value?.json).toBe("a,b");
    expect((await run(s, "await require('http').fetch('bad')")).result.error?.message).toBe("ECONNREFUSED");
  });

  it("a slow host promise ends as a wall-time timeout, and the sandbox goes on", async () => {
    // The host promise settles only when the test says so: the timeout must not wait for it.
    let release = (_: string) => {};
    const slow = { functions: { wait: () => new Promise<string>((r) => (release = r)) } };
    const s = sandbox({ modules: { slow }, limits: { wallMs: 50 } });
    const { result } = await run(s, "await require('slow').wait()");
    expect(result).toMatchObject({ status: "timeout", limit: "wall_ms" });
    release("late");
    expect((await run(s, "1+1")).result.value?.json).toBe(2);
  });
});

describe("lifecycle", () => {
  it("throws a typed error after dispose", async () => {
    const s = createSandbox(engine());
    s.dispose();
    s.dispose(); // idempotent
    await expect(s.evaluate("1")).rejects.toBeInstanceOf(SandboxDisposedError);
    expect(() => s.setGlobal("x", 1)).toThrow(SandboxDisposedError);
    await expect(s.evaluate("1")).rejects.toMatchObject({ code: "SANDBOX_DISPOSED" });
  });

  it("refuses a second evaluation while one is waiting", async () => {
    const slow = { functions: { wait: () => new Promise<number>((r) => setTimeout(() => r(1), 20)) } };
    const s = sandbox({ modules: { slow } });
    const first = s.evaluate("await require('slow').wait()");
    await expect(s.evaluate("1")).rejects.toBeInstanceOf(SandboxBusyError);
    expect((await first).value?.json).toBe(1);
  });

  it("dispose during a host wait ends the evaluation with SandboxDisposedError", async () => {
    const slow = { functions: { wait: () => new Promise<number>((r) => setTimeout(() => r(1), 50)) } };
    const s = createSandbox(engine(), { modules: { slow } });
    const p = s.evaluate("await require('slow').wait()");
    setTimeout(() => s.dispose(), 5);
    await expect(p).rejects.toBeInstanceOf(SandboxDisposedError);
  });

  it("an onEvent callback that throws stops the code and rejects evaluate", async () => {
    const s = sandbox();
    const boom = new Error("sink failed");
    await expect(
      s.evaluate("for (;;) console.log('x')", {
        onEvent: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect((await run(s, "2")).result.value?.json).toBe(2);
  });
});
