/**
 * The event loop: timers run by the host between slices, on an injected clock. The host's own
 * timers (the driver's waits) are vitest's fake ones, and the sandbox's clock reads the same fake
 * time, so every delay here is exact and no test waits for real time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EvaluateOptions, EvaluateResult, Sandbox, SandboxEvent, SandboxOptions } from "./index.ts";
import { sandboxesPerTest } from "./testing.ts";

const { sandbox: make } = sandboxesPerTest();

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

const sandbox = (options: SandboxOptions = {}) => make({ clock: () => Date.now(), ...options });

/** Evaluates and lets fake time run until the evaluation ends; returns the events with the fake time each came at. */
async function run(s: Sandbox, code: string, options: EvaluateOptions = {}) {
  const start = Date.now();
  const events: (SandboxEvent & { at: number })[] = [];
  let result: EvaluateResult | undefined;
  const done = s.evaluate(code, { ...options, onEvent: (e) => events.push({ ...e, at: Date.now() - start }) }).then((r) => (result = r));
  for (let i = 0; i < 10_000 && !result; i++) await vi.advanceTimersToNextTimerAsync();
  await done;
  return { result: result!, events, texts: events.filter((e) => e.type === "console").map((e) => (e.payload as { text: string }).text) };
}

describe("timers", () => {
  it("an evaluation ends when its timers have run; output comes in due order, as it happens", async () => {
    const s = sandbox();
    const { result, events, texts } = await run(s, "setTimeout(() => console.log('b'), 20); setTimeout(() => console.log('a'), 10); 'sync'");
    expect(result.status).toBe("ok");
    expect(result.value).toMatchObject({ json: "sync" });
    expect(texts).toEqual(["a", "b"]);
    expect(events.map((e) => [e.type, e.at])).toEqual([["value", 0], ["console", 10], ["console", 20]]);
    expect(result.durationMs).toBe(20);
    expect(result.timersCleared).toBeUndefined();
  });

  it("passes arguments, keeps scheduling order for equal due times, and drains microtasks after each callback", async () => {
    const s = sandbox();
    const { texts } = await run(
      s,
      `setTimeout((x) => { console.log(x); Promise.resolve().then(() => console.log('micro')); }, 5, 'one');
       setTimeout((x) => console.log(x), 5, 'two');`,
    );
    expect(texts).toEqual(["one", "micro", "two"]);
  });

  it("an awaited timer settles the evaluation's promise (top-level await)", async () => {
    const s = sandbox();
    const { result, events } = await run(s, "await new Promise((r) => setTimeout(() => r(42), 100))");
    expect(result).toMatchObject({ status: "ok", value: { json: 42 } });
    expect(events[0]!.at).toBe(100);
  });

  it("setInterval repeats until cleared; clearTimeout cancels", async () => {
    const s = sandbox();
    const { texts, result } = await run(
      s,
      `let n = 0; const t = setTimeout(() => console.log('never'), 5); clearTimeout(t);
       const i = setInterval(() => { console.log('tick ' + ++n); if (n === 3) clearInterval(i); }, 10);`,
    );
    expect(result.status).toBe("ok");
    expect(texts).toEqual(["tick 1", "tick 2", "tick 3"]);
  });

  it("a timer scheduled with no delay from a callback waits for the next turn", async () => {
    const s = sandbox();
    const { texts } = await run(
      s,
      "setTimeout(() => { setTimeout(() => console.log('later'), 0); console.log('first'); }, 0); setTimeout(() => console.log('second'), 0);",
    );
    expect(texts).toEqual(["first", "second", "later"]);
  });

  it("an interval still pending at wall_ms is cleared and counted; cpu_ms counts only running code", async () => {
    const s = sandbox({ limits: { wallMs: 55, cpuMs: 5 } });
    const { result, texts } = await run(s, "setInterval(() => console.log('tick'), 10)");
    expect(result).toMatchObject({ status: "timeout", limit: "wall_ms", timersCleared: 1 });
    expect(texts).toHaveLength(5);
    // Nothing is left to run later: the next evaluation starts with no timers.
    const next = await run(s, "1");
    expect(next.texts).toEqual([]);
    expect(next.result.timersCleared).toBeUndefined();
  });

  it("an exception in a callback ends the evaluation as an error and clears the rest", async () => {
    const s = sandbox();
    const { result, texts } = await run(s, "setTimeout(() => { throw new Error('boom') }, 1); setTimeout(() => console.log('not run'), 2); 1");
    expect(result).toMatchObject({ status: "error", error: { message: "boom" }, timersCleared: 1 });
    expect(texts).toEqual([]);
  });

  it("refuses more pending timers than maxTimers", async () => {
    const s = sandbox({ limits: { maxTimers: 3 } });
    const { result } = await run(s, "for (let i = 0; i < 4; i++) setTimeout(() => {}, 1000)");
    expect(result).toMatchObject({ status: "error", error: { name: "RangeError", message: "setTimeout: too many pending timers (the limit is 3)" } });
    expect(result.timersCleared).toBe(3);
  });

  it("converts the delay as +delay does: Symbol and BigInt are TypeErrors, a valueOf's throw reaches the caller", async () => {
    const s = sandbox();
    const { result, events } = await run(
      s,
      `const caught = (f) => { try { f(); return 'no throw' } catch (e) { return e.name + ' ' + e.message } };
       [caught(() => setTimeout(() => {}, Symbol('s'))), caught(() => setTimeout(() => {}, 10n)),
        caught(() => setInterval(() => {}, { valueOf() { throw new Error('from valueOf') } })),
        caught(() => setTimeout(() => console.log('at 5'), { valueOf: () => 5 })), caught(() => setTimeout(() => console.log('at 7'), '7'))]`,
    );
    expect(result.status).toBe("ok");
    const [symbol, bigint, thrown, object, text] = result.value!.json as string[];
    expect(symbol).toMatch(/^TypeError /);
    expect(bigint).toMatch(/^TypeError /);
    expect(thrown).toBe("Error from valueOf");
    expect([object, text]).toEqual(["no throw", "no throw"]);
    expect(events.filter((e) => e.type === "console").map((e) => e.at)).toEqual([5, 7]);
  });

  it("a delay's valueOf that schedules timers cannot take the count past maxTimers", async () => {
    const s = sandbox({ limits: { maxTimers: 3 } });
    const { result } = await run(
      s,
      "setTimeout(() => {}, { valueOf() { for (let i = 0; i < 3; i++) setTimeout(() => {}, 1000); return 1000 } })",
    );
    expect(result).toMatchObject({ status: "error", error: { name: "RangeError" }, timersCleared: 3 });
  });

  it("what an evaluation that throws leaves never runs in the next: host calls it did not await, queued jobs", async () => {
    const s = sandbox();
    const settle: ((v: string) => void)[] = [];
    s.setGlobal("slow", () => new Promise<string>((r) => settle.push(r)));
    const thrown = await run(s, "slow().then((v) => console.log('late ' + v)); Promise.resolve().then(() => console.log('job')); throw new Error('A')");
    expect(thrown.result).toMatchObject({ status: "error", error: { message: "A" } });
    const inCallback = await run(
      s,
      "setTimeout(() => { slow().then((v) => console.log('late ' + v)); Promise.resolve().then(() => console.log('job')); throw new Error('B') }, 1)",
    );
    expect(inCallback.result).toMatchObject({ status: "error", error: { message: "B" } });
    // A queued job that schedules a timer, discarded at the end, leaves no timer either.
    const jobTimer = await run(s, "Promise.resolve().then(() => setInterval(() => console.log('ghost'), 1)); throw new Error('C')");
    expect(jobTimer.result).toMatchObject({ status: "error", error: { message: "C" } });
    for (const r of settle) r("x");
    const next = await run(s, "await new Promise((r) => setTimeout(r, 10)); 'next'");
    expect(next.result).toMatchObject({ status: "ok", value: { json: "next" } });
    expect([...thrown.texts, ...inCallback.texts, ...jobTimer.texts, ...next.texts]).toEqual([]);
    expect(next.result.timersCleared).toBeUndefined();
  });

  it("call: a host call the handler did not await never settles in the next call", async () => {
    const s = sandbox();
    const settle: ((v: string) => void)[] = [];
    s.setGlobal("slow", () => new Promise<string>((r) => settle.push(r)));
    await run(s, "globalThis.seen = []; globalThis.h = (tag) => { slow().then(() => seen.push(tag)); return tag }");
    expect(await s.call("h", ["first"])).toMatchObject({ status: "ok", value: { json: "first" } });
    for (const r of settle) r("x");
    await vi.advanceTimersByTimeAsync(1);
    expect(await s.call("h", ["second"])).toMatchObject({ status: "ok", value: { json: "second" } });
    expect((await run(s, "seen")).result.value?.json).toEqual([]);
  });

  it("a host call's signal aborts once its evaluation no longer waits for it (a throw, cancel), never while it does", async () => {
    const s = sandbox();
    const signals: AbortSignal[] = [];
    let abortedWhenDone: boolean | undefined;
    s.setGlobal("slow", function () {
      const signal = this.signal;
      signals.push(signal);
      return new Promise<string>((resolve) => setTimeout(() => resolve(String(abortedWhenDone = signal.aborted)), 50));
    });
    expect((await run(s, "await slow()")).result).toMatchObject({ status: "ok", value: { json: "false" } });
    expect(abortedWhenDone).toBe(false); // waited for to its end
    expect((await run(s, "slow(); throw new Error('A')")).result.status).toBe("error");
    expect(signals[1]!.aborted).toBe(true);
    const cancelled = s.evaluate("await slow()");
    s.cancel();
    expect((await cancelled).status).toBe("cancelled");
    expect(signals[2]!.aborted).toBe(true);
    expect(signals[2]).not.toBe(signals[1]); // each evaluation's calls get a signal of their own
  });

  it("refuses a callback that is not a function (no code strings)", async () => {
    const s = sandbox();
    const { result } = await run(s, "setTimeout('console.log(1)', 1)");
    expect(result).toMatchObject({ status: "error", error: { name: "TypeError" } });
  });

  it("timers: 'clear' ends when the code's result is known", async () => {
    const s = sandbox();
    const { result, texts } = await run(s, "setTimeout(() => console.log('x'), 10); 1", { timers: "clear" });
    expect(result).toMatchObject({ status: "ok", timersCleared: 1 });
    expect(texts).toEqual([]);
  });

  it("call: a handler awaits a timer; timers it leaves are cleared", async () => {
    const s = sandbox();
    await run(s, "globalThis.h = async () => { setTimeout(() => console.log('left'), 500); await new Promise((r) => setTimeout(r, 30)); return 'done' }");
    let result: EvaluateResult | undefined;
    const p = s.call("h").then((r) => (result = r));
    while (!result) await vi.advanceTimersToNextTimerAsync();
    await p;
    expect(result).toMatchObject({ status: "ok", value: { json: "done" }, timersCleared: 1 });
  });

  it("cancel ends an evaluation waiting on a timer, with status cancelled, and the sandbox stays usable", async () => {
    const s = sandbox();
    const p = s.evaluate("setInterval(() => {}, 1000); await new Promise(() => {})");
    await vi.advanceTimersByTimeAsync(2500);
    expect(s.cancel()).toBe(true);
    const result = await p;
    expect(result).toMatchObject({ status: "cancelled", timersCleared: 1 });
    expect(s.cancel()).toBe(false);
    expect((await run(s, "2 + 2")).result).toMatchObject({ status: "ok", value: { json: 4 } });
  });

  it("a cancel flag set from elsewhere stops spinning code", async () => {
    vi.useRealTimers();
    const s = make();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    let polls = 0;
    s.setGlobal("poll", () => {
      if (++polls === 100) Atomics.store(flag, 0, 1);
    });
    const cancelled = await s.evaluate("while (true) { poll() }", { cancelFlag: flag });
    expect(cancelled.status).toBe("cancelled");
    expect(polls).toBeGreaterThanOrEqual(100);
  });
});
