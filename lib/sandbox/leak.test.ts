import { describe, expect, it } from "vitest";
import { assertNoLeaks, loadDebugQuickJS } from "./debug.ts";
import { createSandbox, type HostValue } from "./index.ts";

// The DEBUG build asserts in JS_FreeRuntime that no object is left, and assertNoMemoryAllocated
// checks that every runtime and context was disposed.
describe("no leaks (debug-sync variant)", () => {
  it("detects a leaked handle (the check works)", async () => {
    const engine = await loadDebugQuickJS();
    const rt = engine.newRuntime();
    rt.dispose();
    expect(() => assertNoLeaks(engine)).not.toThrow();
    const rt2 = engine.newRuntime();
    expect(() => assertNoLeaks(engine)).toThrow(/not disposed/);
    rt2.dispose();
  });

  it("frees everything after a mixed workload", async () => {
    const engine = await loadDebugQuickJS();
    const http = {
      functions: {
        fetch: async (u: HostValue) => ({ url: u as string }),
        fail: async () => {
          throw new Error("down");
        },
        never: () => new Promise<string>(() => {}),
      },
    };
    const fs = { functions: { read: (p: HostValue) => `x${String(p)}`, bytes: () => new Uint8Array([1]) }, values: { sep: "/" } };
    const s = createSandbox(engine, {
      modules: { http, fs },
      globals: { args: ["a"], env: { A: "1" }, host: (n: HostValue) => n },
      limits: { cpuMs: 50, wallMs: 200, stackBytes: 32 * 1024 },
    });
    const codes = [
      "console.log('a', {b: [1, 2]}, new Map([[1, 2]])); 1",
      "let x = await Promise.resolve(2); x",
      "require('fs').read('p') + require('fs').sep + require('fs').bytes().length",
      "(await require('http').fetch('u')).url",
      "await require('http').fail()",
      "require('http').never(); 'left pending'",
      "throw new Error('e')",
      "throw {a: 1}",
      "Promise.reject(1)",
      "new Promise(() => {})",
      "function f(n) { return n ? f(n - 1) : 0 } f(5)",
      "while (true) {}",
      "Symbol('s')",
      "[1, 2, 3].map(host)",
      "require('nope')",
      "1 +",
    ];
    for (const code of codes) await s.evaluate(code);
    s.evaluateSync("args.length + env.A");
    await s.call("f");
    await s.loadLibrary("lib.js", "var lib = 1");
    s.setGlobal("late", { a: [1] });
    // Leave a host promise in flight at dispose time.
    void s.evaluate("await require('http').never()").catch(() => {});
    s.dispose();
    expect(() => assertNoLeaks(engine)).not.toThrow();
  });

  it("frees timers: run, cleared from their own callback, left at a limit, at cancel and at dispose", async () => {
    const engine = await loadDebugQuickJS();
    const s = createSandbox(engine, { limits: { wallMs: 100 } });
    await s.evaluate("let n = 0; const i = setInterval((a) => { if (++n === 3) clearInterval(i) }, 1, {arg: 1}); setTimeout(() => {}, 2, [1])");
    await s.evaluate("setTimeout(() => { throw new Error('x') }, 1); setTimeout(() => {}, 5)");
    await s.evaluate("setInterval(() => {}, 10)"); // cleared at wall_ms
    const cancelled = s.evaluate("setTimeout(() => {}, 50_000, {a: 1}); await new Promise(() => {})");
    s.cancel();
    expect((await cancelled).status).toBe("cancelled");
    await s.call("setTimeout", []).catch(() => {});
    void s.evaluate("setTimeout(() => {}, 50_000); await new Promise(() => {})").catch(() => {});
    s.dispose();
    expect(() => assertNoLeaks(engine)).not.toThrow();
  });

  it("frees a sandbox stopped by a limit or out of memory", async () => {
    const engine = await loadDebugQuickJS();
    const s = createSandbox(engine, { limits: { maxEvents: 2, memMb: 8, cpuMs: 2000 } });
    await s.evaluate("for (;;) console.log(1)");
    await s.evaluate("var big = []; for (;;) big.push('xxxxxxxx' + big.length)");
    await s.evaluate("big = null; new ArrayBuffer(64 * 1024 * 1024)");
    await s.evaluate("Promise.resolve().then(() => { for(;;) console.log(2) })");
    s.dispose();
    expect(() => assertNoLeaks(engine)).not.toThrow();
  });
});
