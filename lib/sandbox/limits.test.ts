import { describe, expect, it } from "vitest";
import { loadQuickJS, type SandboxEvent } from "./index.ts";
import { sandboxesPerTest } from "./testing.ts";
import { utf8Length } from "./limits.ts";
import { nestingDepth } from "./source.ts";

const { sandbox, engine } = sandboxesPerTest();

describe("time limits", () => {
  it("interrupts an infinite loop at cpuMs, then answers the next evaluation", async () => {
    // A clock of the test's own, one millisecond further at each reading: the interrupt must come
    // at the limit exactly, however loaded the machine is.
    let now = 0;
    const s = sandbox({ limits: { cpuMs: 100 }, clock: () => now++ });
    const r = await s.evaluate("while(true){}");
    expect(r).toMatchObject({ status: "timeout", limit: "cpu_ms" });
    expect(r.durationMs).toBeGreaterThanOrEqual(100);
    expect(r.durationMs).toBeLessThanOrEqual(104);
    expect((await s.evaluate("1+1")).value?.json).toBe(2);
  });

  it("counts on the real clock by default: an infinite loop ends no sooner than cpuMs", async () => {
    const s = sandbox({ limits: { cpuMs: 100 } });
    const t0 = performance.now();
    expect(await s.evaluate("while(true){}")).toMatchObject({ status: "timeout", limit: "cpu_ms" });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(99);
  });

  it("try/catch cannot swallow the interrupt", async () => {
    const s = sandbox({ limits: { cpuMs: 50 } });
    const r = await s.evaluate("for (;;) { try { while (true) {} } catch (e) { globalThis.caught = true } }");
    expect(r.status).toBe("timeout");
    expect((await s.evaluate("globalThis.caught")).value?.type).toBe("undefined");
  });

  it("interrupts runaway promise jobs and drops what is left of them", async () => {
    const events: SandboxEvent[] = [];
    const s = sandbox({ limits: { cpuMs: 50 } });
    const r = await s.evaluate("function f() { Promise.resolve().then(f) } f(); Promise.resolve().then(() => { while (true) {} })");
    expect(r.status).toBe("timeout");
    const next = await s.evaluate("'fresh'", { onEvent: (e) => events.push(e) });
    expect(next.value?.json).toBe("fresh");
    expect(events).toHaveLength(1);
  });

  it("per-evaluation limits override the sandbox's", async () => {
    const s = sandbox({ limits: { cpuMs: 10_000 } });
    const r = await s.evaluate("while(true){}", { limits: { cpuMs: 20 } });
    expect(r).toMatchObject({ status: "timeout", limit: "cpu_ms" });
  });

  it("catastrophic regex backtracking is interrupted too", async () => {
    const s = sandbox({ limits: { cpuMs: 50 } });
    const r = await s.evaluate("/(a+)+$/.test('a'.repeat(40) + 'b')");
    expect(r.status).toBe("timeout");
  });
});

describe("event and output limits", () => {
  it("stops at maxEvents, emitting only the events within the limit", async () => {
    const events: SandboxEvent[] = [];
    const s = sandbox({ limits: { maxEvents: 5 } });
    const r = await s.evaluate("for (let i = 0; ; i++) { try { console.log(i) } catch (e) {} }", { onEvent: (e) => events.push(e) });
    expect(r).toMatchObject({ status: "limit_exceeded", limit: "max_events", events: 5 });
    expect(events.map((e) => (e.type === "console" ? e.payload.text : e.type))).toEqual(["0", "1", "2", "3", "4"]);
    expect((await s.evaluate("1")).value?.json).toBe(1);
  });

  it("stops at maxOutputBytes", async () => {
    const events: SandboxEvent[] = [];
    const s = sandbox({ limits: { maxOutputBytes: 25 } });
    const r = await s.evaluate("for (let i = 0; i < 100; i++) console.log('0123456789')", { onEvent: (e) => events.push(e) });
    expect(r).toMatchObject({ status: "limit_exceeded", limit: "max_output_bytes", events: 2, outputBytes: 20 });
    expect(events).toHaveLength(2);
  });

  it("a value event that does not fit is a limit breach", async () => {
    const s = sandbox({ limits: { maxEvents: 1 } });
    const r = await s.evaluate("console.log('one'); 2");
    expect(r).toMatchObject({ status: "limit_exceeded", limit: "max_events", events: 1 });
  });

  it("counts UTF-8 bytes", () => {
    expect(utf8Length("abc")).toBe(3);
    expect(utf8Length("é")).toBe(2);
    expect(utf8Length("€")).toBe(3);
    expect(utf8Length("😀")).toBe(4);
    expect(utf8Length("a\uD800b")).toBe(5); // lone surrogate -> U+FFFD, 3 bytes
  });
});

describe("memory and stack", () => {
  it("a memory bomb ends as an out-of-memory error, and the sandbox stays usable", async () => {
    const s = sandbox({ limits: { memMb: 16, cpuMs: 10_000 } });
    const r = await s.evaluate("var big = []; while (true) big.push('xxxxxxxxxxxxxxxx' + big.length)");
    expect(r).toMatchObject({ status: "error", limit: "memory", error: { name: "InternalError", message: "out of memory" } });
    expect((await s.evaluate("big = null; 1+1")).value?.json).toBe(2);
    expect((await s.evaluate("'x'.repeat(1e6).length")).value?.json).toBe(1e6);
  });

  it("one allocation over the limit is an out-of-memory error", async () => {
    const s = sandbox({ limits: { memMb: 8 } });
    const r = await s.evaluate("new ArrayBuffer(64 * 1024 * 1024)");
    expect(r).toMatchObject({ status: "error", limit: "memory" });
    expect((await s.evaluate("2+2")).value?.json).toBe(4);
  });

  it("an engine with maxHeapMb bounds large allocations too", async () => {
    // QuickJS under Emscripten counts allocations, not their sizes: 1 MiB buffers slip past
    // memMb. The engine heap cap is the hard bound.
    const capped = await loadQuickJS({ maxHeapMb: 256 });
    const s = sandbox({ limits: { memMb: 64 } }, capped);
    const r = await s.evaluate("const chunks = []; for (;;) chunks.push(new ArrayBuffer(1024 * 1024))");
    expect(r).toMatchObject({ status: "error", limit: "memory" });
    expect((await s.evaluate("chunks.length = 0; 1+1")).value?.json).toBe(2);
    expect(await loadQuickJS({ maxHeapMb: 256 })).toBe(capped);
  });

  it("large allocations between interrupt polls are refused as the heap grows", async () => {
    // Each iteration allocates ~1.6 MB natively; polled per ~10k ops, the heap would reach
    // gigabytes before the interrupt saw it. The growth gate refuses the heap growth itself.
    const heap = (engine() as unknown as { getWasmMemory(): WebAssembly.Memory }).getWasmMemory();
    const before = heap.buffer.byteLength;
    const s = sandbox({ limits: { memMb: 16 } });
    const r = await s.evaluate("const a = []; while (true) a.push(new Array(100000).fill(1))");
    expect(r).toMatchObject({ status: "error", limit: "memory", error: { message: "out of memory" } });
    expect(heap.buffer.byteLength - before).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect((await s.evaluate("a.length = 0; 1+1")).value?.json).toBe(2);
  });

  it("deep recursion is a catchable stack overflow", async () => {
    const s = sandbox();
    const r = await s.evaluate("function f() { return f() + 1 } f()");
    expect(r).toMatchObject({ status: "error", error: { name: "InternalError", message: "stack overflow" } });
    const deep = await s.evaluate("var a = []; for (let i = 0; i < 100000; i++) a = [a]; try { JSON.stringify(a) } catch (e) { String(e) }");
    expect(deep.value?.json).toBe("InternalError: stack overflow");
    expect((await s.evaluate("1+1")).value?.json).toBe(2);
  });
});

describe("source checks", () => {
  it("measures bracket nesting, ignoring strings, comments and template text", () => {
    expect(nestingDepth("f(a[1], {b: 2})")).toBe(2);
    expect(nestingDepth("'((((' + \"[[[[\" // ((((\n /* {{{{ */ 1")).toBe(0);
    expect(nestingDepth("`a ${ f(`b ${ [1] }`) } c`")).toBe(4);
    expect(nestingDepth("(".repeat(300))).toBe(300);
  });
});
