/** The web globals (web.ts, js/web/): behaviour the wpt data does not cover, cost, laziness. */
import { describe, expect, it } from "vitest";
import type { Sandbox } from "./index.ts";
import { sandboxesPerTest } from "./testing.ts";
import { WEB_GLOBALS } from "./web.ts";

const { sandbox } = sandboxesPerTest();
async function value(s: Sandbox, code: string): Promise<unknown> {
  const r = await s.evaluate(code);
  if (r.status !== "ok") throw new Error(`${r.status}: ${r.error?.stack ?? r.limit}`);
  return r.value?.json;
}

describe("web globals", () => {
  it("are all there, non-enumerable, and load only when read", async () => {
    const s = sandbox();
    const names = Object.keys(WEB_GLOBALS);
    const list = JSON.stringify(names);
    expect(await value(s, `${list}.filter((n) => { const d = Object.getOwnPropertyDescriptor(globalThis, n); return !d || !d.get || d.enumerable })`)).toEqual(
      [],
    );
    const before = s.memoryUsage();
    expect(await value(s, `${list}.map((n) => typeof globalThis[n])`)).toEqual(
      names.map((n) => (["performance", "crypto"].includes(n) ? "object" : "function")),
    );
    expect(s.memoryUsage()).toBeGreaterThan(before + 100_000); // the chunks were loaded just now
    expect(await value(s, `${list}.filter((n) => "value" in Object.getOwnPropertyDescriptor(globalThis, n)).length`)).toBe(names.length);
  });

  it("are left out with webGlobals: false", async () => {
    const s = sandbox({ webGlobals: false });
    expect(await value(s, "[typeof URL, typeof crypto, typeof structuredClone, typeof console.log]")).toEqual([
      "undefined",
      "undefined",
      "undefined",
      "function",
    ]);
  });

  it("include URL.parse and URL.canParse", async () => {
    const s = sandbox();
    expect(await value(s, "[URL.parse('nope'), URL.parse('b', 'http://a/').href, URL.canParse('http://x')]")).toEqual([null, "http://a/b", true]);
  });

  it("can be replaced or deleted like any global, in sloppy and strict code", async () => {
    const s = sandbox();
    expect(await value(s, "var URL = 1; globalThis.crypto = 2; delete globalThis.atob; [URL, crypto, typeof atob]")).toEqual([1, 2, "undefined"]);
    expect(await value(s, "'use strict'; TextEncoder = 3; TextEncoder")).toBe(3);
    // The URL chunk takes the real TextEncoder even when the global is gone.
    expect(await value(sandbox(), "delete globalThis.TextEncoder; TextDecoder = null; new URL('http://h/é').pathname")).toBe("/%C3%A9");
  });

  it("structuredClone keeps types, shared references and cycles", async () => {
    const s = sandbox();
    const code = `
      const buf = new ArrayBuffer(8); const view = new Uint16Array(buf, 2, 2); view[0] = 7;
      const err = new RangeError('r', { cause: 1 });
      const o = { d: new Date(5), re: /a/gi, m: new Map([[1, 2]]), st: new Set([3]), view, dv: new DataView(buf), err, big: 10n, neg: -0, arr: [1, , 3], s: new String('x') };
      o.self = o;
      const c = structuredClone(o);
      [c.self === c, c.d instanceof Date && c.d.getTime(), c.re.source + c.re.flags, c.m.get(1), c.st.has(3),
       c.view instanceof Uint16Array && c.view[0], c.view.buffer === c.dv.buffer, c.view.buffer !== buf,
       c.err instanceof RangeError && c.err.message, c.err.cause, typeof c.big, Object.is(c.neg, -0), 1 in c.arr, c.arr.length,
       typeof c.s, String(c.s)]`;
    expect(await value(s, code)).toEqual([true, 5, "agi", 2, true, 7, true, true, "r", 1, "bigint", true, false, 3, "object", "x"]);
  });

  it("structuredClone refuses functions, symbols and other uncloneables with DataCloneError", async () => {
    const s = sandbox();
    const code = `[() => 1, Symbol('s'), { f() {} }, new WeakMap(), Promise.resolve(), [Symbol.iterator]].map((v) => {
      try { structuredClone(v); return 'cloned' } catch (e) { return e instanceof DOMException && e.name === 'DataCloneError' && e.code === 25 }
    })`;
    expect(await value(s, code)).toEqual([true, true, true, true, true, true]);
    expect(await value(s, "class A { x = 1 }; const c = structuredClone(new A()); [Object.getPrototypeOf(c) === Object.prototype, c.x]")).toEqual([true, 1]);
  });

  it("DOMException follows WebIDL", async () => {
    const s = sandbox();
    expect(
      await value(
        s,
        "const e = new DOMException('m', 'NotFoundError'); [e.name, e.message, e.code, e instanceof Error, DOMException.NOT_FOUND_ERR, Object.prototype.toString.call(e), Object.keys(e).length, typeof e.stack]",
      ),
    )
      .toEqual(["NotFoundError", "m", 8, true, 8, "[object DOMException]", 0, "string"]);
    expect(await value(s, "const d = new DOMException(); [d.name, d.message, d.code]")).toEqual(["Error", "", 0]);
  });

  it("EventTarget dispatches to listeners with once, signal, handleEvent and preventDefault", async () => {
    const s = sandbox();
    const code = `
      const t = new EventTarget(), seen = [], ac = new AbortController();
      t.addEventListener('x', (e) => seen.push('a:' + e.eventPhase + ':' + (e.target === t)), { once: true });
      t.addEventListener('x', { handleEvent(e) { seen.push('b'); e.preventDefault(); } });
      t.addEventListener('x', () => seen.push('c'), { signal: ac.signal });
      const ok1 = t.dispatchEvent(new Event('x', { cancelable: true }));
      ac.abort();
      const ok2 = t.dispatchEvent(new Event('x'));
      [seen, ok1, ok2]`;
    expect(await value(s, code)).toEqual([["a:2:true", "b", "c", "b"], false, true]);
  });

  it("a throwing listener is reported and the others still run", async () => {
    const s = sandbox();
    const texts: string[] = [];
    const r = await s.evaluate(
      "const t = new EventTarget(); let n = 0; t.addEventListener('x', () => { throw new Error('boom') }); t.addEventListener('x', () => n++); t.dispatchEvent(new Event('x')); n",
      {
        onEvent: (e) => e.type === "console" && texts.push(e.payload.text),
      },
    );
    expect(r.value?.json).toBe(1);
    expect(texts[0]).toMatch(/^Uncaught Error: boom/);
  });

  it("AbortController, AbortSignal.abort, any and throwIfAborted", async () => {
    const s = sandbox();
    const code = `
      const a = new AbortController(), b = new AbortController();
      const any = AbortSignal.any([a.signal, b.signal]);
      let fired = 0; any.onabort = () => fired++;
      b.abort('why');
      let thrown; try { any.throwIfAborted() } catch (e) { thrown = e }
      const pre = AbortSignal.abort();
      [any.aborted, any.reason, fired, thrown, pre.aborted, pre.reason.name, pre.reason instanceof DOMException, a.signal.aborted,
       (() => { try { new AbortSignal() } catch (e) { return e.name } })()]`;
    expect(await value(s, code)).toEqual([true, "why", 1, "why", true, "AbortError", true, false, "TypeError"]);
  });

  it("AbortSignal.timeout uses the sandbox's setTimeout, read when it is called", async () => {
    const s = sandbox();
    const code = `
      const saved = globalThis.setTimeout;
      delete globalThis.setTimeout;
      let missing; try { AbortSignal.timeout(10) } catch (e) { missing = e.message }
      const calls = [];
      globalThis.setTimeout = (f, ms) => { calls.push(ms); f(); return 1 };
      const sig = AbortSignal.timeout(25);
      globalThis.setTimeout = saved;
      [missing, calls, sig.aborted, sig.reason.name]`;
    expect(await value(s, code)).toEqual(["AbortSignal.timeout needs setTimeout, and this sandbox has none", [25], true, "TimeoutError"]);
  });

  it("queueMicrotask runs after the current job; performance.now counts from creation", async () => {
    let now = 1000;
    const s = sandbox({ clock: () => now });
    now = 1012.3456;
    expect(
      await value(
        s,
        "const order = []; queueMicrotask(() => order.push(2)); order.push(1); await null; [order, performance.now(), typeof performance.timeOrigin]",
      ),
    )
      .toEqual([[1, 2], 12.3, "number"]);
  });

  it("crypto.getRandomValues fills integer arrays from the host's random source", async () => {
    let calls = 0;
    const s = sandbox({
      random: (b) => {
        calls++;
        b.fill(0xab);
      },
    });
    expect(await value(s, "[...crypto.getRandomValues(new Uint8Array(3))]")).toEqual([0xab, 0xab, 0xab]);
    expect(await value(s, "crypto.getRandomValues(new Uint16Array(2))[1]")).toBe(0xabab);
    expect(await value(s, "crypto.getRandomValues(new BigUint64Array(1))[0] === 0xababababababababn")).toBe(true);
    expect(await value(s, "crypto.randomUUID()")).toBe("abababab-abab-4bab-abab-abababababab");
    expect(await value(s, "crypto.getRandomValues(new Uint8Array(0)).length")).toBe(0);
    expect(calls).toBe(4); // an empty array needs no host call
  });

  it("crypto.randomUUID is a version 4 UUID", async () => {
    const s = sandbox();
    expect(await value(s, "crypto.randomUUID()")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("crypto.subtle.digest gives SHA-1/256/384/512 as ArrayBuffers and rejects the rest", async () => {
    const s = sandbox();
    const code = `
      const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');
      const data = new TextEncoder().encode('abc');
      const out = [];
      for (const alg of ['SHA-1', 'sha-256', { name: 'SHA-384' }, 'SHA-512']) out.push(hex(await crypto.subtle.digest(alg, data)).slice(0, 16));
      out.push(await crypto.subtle.digest('MD5', data).then(() => 'ok', (e) => e.name));
      out.push(await crypto.subtle.digest('SHA-256', 'text').then(() => 'ok', (e) => e.name));
      out.push(crypto.subtle.digest('SHA-256', data.buffer) instanceof Promise);
      out`;
    expect(await value(s, code)).toEqual([
      "a9993e364706816a",
      "ba7816bf8f01cfea",
      "cb00753f45a35e8b",
      "ddaf35a193617aba",
      "NotSupportedError",
      "TypeError",
      true,
    ]);
  });

  it("TextEncoder.encodeInto stops before a character that does not fit", async () => {
    const s = sandbox();
    expect(await value(s, "const d = new Uint8Array(4); [new TextEncoder().encodeInto('a€b', d), [...d]]")).toEqual([{ read: 2, written: 4 }, [
      97,
      0xe2,
      0x82,
      0xac,
    ]]);
    expect(await value(s, "const d2 = new Uint8Array(3); new TextEncoder().encodeInto('😀', d2)")).toEqual({ read: 0, written: 0 });
  });

  it("btoa refuses characters outside Latin-1", async () => {
    const s = sandbox();
    expect(await value(s, "[btoa('\\xff\\x00a'), (() => { try { btoa('€') } catch (e) { return e.name + ':' + (e instanceof DOMException) } })()]")).toEqual([
      "/wBh",
      "InvalidCharacterError:true",
    ]);
  });

  it("URLSearchParams sorts, iterates and serializes as the standard says", async () => {
    const s = sandbox();
    expect(
      await value(
        s,
        "const p = new URLSearchParams({ b: '2 3', a: 'é&' }); p.sort(); [p.toString(), [...p.keys()], new URL('https://x/?q=1').searchParams.get('q')]",
      ),
    )
      .toEqual(["a=%C3%A9%26&b=2+3", ["a", "b"], "1"]);
  });
});

describe("web globals on the DEBUG build", () => {
  it("leave nothing behind once the sandbox is disposed", async () => {
    const { assertNoLeaks, loadDebugQuickJS } = await import("./debug.ts");
    const { createSandbox } = await import("./index.ts");
    const engine = await loadDebugQuickJS();
    // The DEBUG build's frames are ~3 KiB, and loading the chunks takes it about 5 s of CPU.
    const s = createSandbox(engine, { limits: { stackBytes: 256 * 1024, cpuMs: 60_000 } });
    const code = `const names = ${JSON.stringify(Object.keys(WEB_GLOBALS))}; names.forEach((n) => globalThis[n]);
      new URL('http://example/?a=1').searchParams.get('a') + crypto.randomUUID().length +
      new Uint8Array(await crypto.subtle.digest('SHA-1', new TextEncoder().encode('x'))).length`;
    const r = await s.evaluate(code);
    expect(r.status, r.error?.stack).toBe("ok");
    expect(r.value?.json).toBe("13620");
    const pending = await s.evaluate("crypto.subtle.digest('SHA-256', new Uint8Array(1))", { limits: { wallMs: 1 } });
    expect(["ok", "timeout"]).toContain(pending.status);
    s.dispose();
    assertNoLeaks(engine);
  }, 60_000);
});

describe("web globals first read from deep recursion", () => {
  it("still load: a chunk compiles with stack of its own", async () => {
    const s = sandbox();
    const code = `function deep(n) { return n === 0 ? new URL('http://b\u00fccher.example/').host + structuredClone([1])[0] : deep(n - 1) }
      let depth = 1, last;
      // as deep as the sandbox's stack allows, minus a little for the getter and the loader call
      for (;;) { try { (function probe(n) { return n === 0 ? 0 : probe(n - 1) })(depth * 2); depth *= 2 } catch { break } }
      deep(Math.floor(depth * 0.9))`;
    expect(await value(s, code)).toBe("xn--bcher-kva.example1");
  });
});
