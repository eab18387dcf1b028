import { describe, expect, it } from "vitest";
import { assertNoLeaks, loadDebugQuickJS } from "./debug.ts";
import { DirectCalls } from "./direct.ts";
import { createSandbox, type HostValue } from "./index.ts";
import { sandboxesPerTest } from "./testing.ts";

const { sandbox, engine } = sandboxesPerTest();

const STRINGS = [
  "",
  "plain ascii",
  '{"request":{"path":"/hello","headers":{"user-agent":"autocannon"}}}',
  "latin-1: café ÿ",
  "two bytes ü, three € and four 😀",
  "nul \u0000 inside",
  "lone high \ud800 surrogate",
  "lone low \udc00 surrogate",
  "ends high \ud83d",
  "é".repeat(5000), // long and not ASCII: the public path
  "x".repeat(100_000),
  "😀".repeat(3000),
];

describe("DirectCalls (the per-call path without quickjs-emscripten's per-call overhead)", () => {
  it("makes the same strings as ctx.newString", () => {
    const rt = engine().newRuntime();
    const ctx = rt.newContext();
    const direct = new DirectCalls(ctx);
    try {
      for (const s of STRINGS) {
        const a = direct.newString(s);
        const b = ctx.newString(s);
        expect(ctx.getString(a)).toBe(ctx.getString(b));
        const eq = ctx.unwrapResult(ctx.evalCode("(a, b) => a === b"));
        expect(ctx.dump(ctx.unwrapResult(ctx.callFunction(eq, ctx.undefined, a, b)))).toBe(true);
        eq.dispose();
        a.dispose();
        b.dispose();
      }
    } finally {
      direct.dispose();
      ctx.dispose();
      rt.dispose();
    }
  });

  it("calls as ctx.callFunction does: arguments, results, thrown values, more arguments than its buffer", () => {
    const rt = engine().newRuntime();
    const ctx = rt.newContext();
    const direct = new DirectCalls(ctx);
    try {
      const join = ctx.unwrapResult(ctx.evalCode("'use strict'; (function (...a) { return String(this) + ':' + a.join(',') })"));
      const args = Array.from({ length: 10 }, (_, i) => ctx.newNumber(i));
      for (const n of [0, 1, 2, 8, 9, 10]) {
        const value = ctx.unwrapResult(direct.call(join, args.slice(0, n)));
        expect(ctx.getString(value)).toBe(`undefined:${[...Array(n).keys()].join(",")}`);
        value.dispose();
      }
      const thrower = ctx.unwrapResult(ctx.evalCode("(x) => { throw new TypeError('bad ' + x) }"));
      const r = direct.call(thrower, [args[3]!]);
      if (!("error" in r) || !r.error) throw new Error("expected an error");
      expect(ctx.dump(r.error)).toMatchObject({ name: "TypeError", message: "bad 3" });
      r.error.dispose();
      for (const h of [join, thrower, ...args]) h.dispose();
    } finally {
      direct.dispose();
      ctx.dispose();
      rt.dispose();
    }
  });
});

describe("Sandbox.callText", () => {
  it("gives a string result as text, with no value; anything else as call gives it", async () => {
    const s = sandbox();
    await s.evaluate(`
      function str(a, b) { return a + "|" + b; }
      function num() { return 42; }
      async function later(x) { await null; return "later " + x; }
      function fails() { throw new RangeError("no"); }
      var notFn = 1;
    `);
    const text = await s.callText("str", ["a", { b: 1 } as HostValue]);
    expect(text).toMatchObject({ status: "ok", text: "a|[object Object]" });
    expect(text.value).toBeUndefined();
    expect(await s.callText("later", ["x"])).toMatchObject({ status: "ok", text: "later x" });
    for (const name of ["num", "fails", "notFn", "missing"]) {
      const [a, b] = [await s.callText(name, []), await s.call(name, [])];
      expect(a.text).toBeUndefined();
      const strip = ({ durationMs: _d, ...r }: { durationMs: number }) => r;
      expect(strip(a)).toEqual(strip(b));
    }
    expect((await s.callText("num")).value).toMatchObject({ type: "number", json: 42 });
  });

  it("keeps only a global that cannot change: a replaced global is called as it is now", async () => {
    const s = sandbox();
    await s.evaluate(`
      Object.defineProperty(globalThis, "fixed", { value: () => "fixed", writable: false, configurable: false });
      var plain = () => "first";
      Object.defineProperty(globalThis, "viaGetter", { get: () => () => "getter " + (++globalThis.reads), configurable: false });
      var reads = 0;
    `);
    for (let i = 0; i < 3; i++) expect((await s.callText("fixed")).text).toBe("fixed");
    expect((await s.callText("plain")).text).toBe("first");
    await s.evaluate(`plain = () => "second"`);
    expect((await s.callText("plain")).text).toBe("second");
    expect((await s.call("plain")).value?.json).toBe("second");
    // A call may replace a global too.
    await s.evaluate(`function swap() { plain = () => "third"; return "swapped"; }`);
    expect((await s.callText("swap")).text).toBe("swapped");
    expect((await s.callText("plain")).text).toBe("third");
    expect((await s.callText("viaGetter")).text).toBe("getter 1");
    expect((await s.callText("viaGetter")).text).toBe("getter 2");
    // Not there yet, then defined fixed: found.
    expect((await s.callText("later")).status).toBe("error");
    await s.evaluate(`Object.defineProperty(globalThis, "later", { value: () => "now", writable: false, configurable: false })`);
    expect((await s.callText("later")).text).toBe("now");
    s.setGlobal("fromHost", "data");
    expect((await s.callText("fromHost")).error).toMatchObject({ name: "TypeError", message: "fromHost is not a function" });
  });

  it("leaves nothing behind (debug engine)", async () => {
    const debugEngine = await loadDebugQuickJS();
    const s = createSandbox(debugEngine);
    await s.evaluate(`Object.defineProperty(globalThis, "fixed", { value: (x) => "got " + x, writable: false, configurable: false }); var loose = () => 1;`);
    for (const x of ["a", "é😀", "\ud800"]) expect((await s.callText("fixed", [x])).status).toBe("ok");
    await s.callText("loose");
    await s.call("fixed", ["b"]);
    s.dispose();
    expect(() => assertNoLeaks(debugEngine)).not.toThrow();
  });
});
