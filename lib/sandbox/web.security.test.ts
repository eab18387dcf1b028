/** Escape probes for the web globals (web.ts, js/web/): everything reachable from them is
 * sandbox code, and the host functions behind crypto and performance take and give only copies. */
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

describe("web globals are sealed", () => {
  it("every function reachable from them has the sandbox's Function as its constructor", async () => {
    const s = sandbox();
    // Walks every property, getter, setter and prototype reachable from the globals (and from
    // objects they make) and collects functions whose constructor chain leaves the sandbox.
    const code = `
      const roots = ${JSON.stringify(Object.keys(WEB_GLOBALS))}.map((n) => globalThis[n]);
      roots.push(new URL('http://x/?a=1'), new URL('http://x').searchParams, new TextEncoder(), new TextDecoder(), new AbortController(),
        new EventTarget(), new Event('x'), new DOMException('m'), crypto.subtle, AbortSignal.abort(), crypto.subtle.digest('SHA-1', new Uint8Array(1)));
      const seen = new Set(), bad = [];
      const Fn = Function, AsyncFn = (async () => {}).constructor;
      function visit(v, path) {
        if (v === null || (typeof v !== 'object' && typeof v !== 'function') || seen.has(v)) return;
        seen.add(v);
        if (typeof v === 'function' && v !== Fn.prototype) {
          const c = Object.getPrototypeOf(v).constructor;
          if (c !== Fn && c !== AsyncFn) bad.push(path);
          if (typeof v.constructor('return typeof process')() !== 'string') bad.push(path + ' (constructor)');
          if (v.constructor('return typeof process')() !== 'undefined') bad.push(path + ' reaches process');
        }
        visit(Object.getPrototypeOf(v), path + '.__proto__');
        for (const k of Reflect.ownKeys(v)) {
          const d = Object.getOwnPropertyDescriptor(v, k);
          const name = path + '.' + String(k);
          if ('value' in d) visit(d.value, name); else { visit(d.get, name + '<get>'); visit(d.set, name + '<set>'); }
        }
      }
      roots.forEach((r, i) => visit(r, 'root' + i));
      [seen.size > 100, bad]`;
    expect(await value(s, code)).toEqual([true, []]);
  });

  it("the host functions stay out of reach", async () => {
    const s = sandbox();
    // The chunks' host object is not a global nor a property of anything the sandbox can see.
    expect(await value(s, "typeof crypto; [typeof randomBytes, typeof digest, typeof loadWeb, typeof __web, Object.getOwnPropertyNames(crypto).sort()]"))
      .toEqual(["undefined", "undefined", "undefined", "undefined", ["getRandomValues", "randomUUID", "subtle"]]);
  });

  it("a setter on Object.prototype does not receive the host functions when the core chunk loads", async () => {
    const s = sandbox();
    const code = `const names = ['now', 'randomBytes', 'digest', 'timeOrigin', 'host', 'report', 'chunk'], got = [];
      for (const k of names) Object.defineProperty(Object.prototype, k, { set() { got.push(k) }, configurable: true });
      typeof crypto;
      for (const k of names) delete Object.prototype[k];
      [got, typeof performance.now(), crypto.getRandomValues(new Uint8Array(4)).length]`;
    expect(await value(s, code)).toEqual([[], "number", 4]);
  });

  it("sandboxed code run by a chunk's first load gets no more stack than any other", async () => {
    // The chunk's body calls built-ins the sandbox may have replaced (here Int8Array.prototype.fill):
    // with the parse's extra stack, that code overflowed the host's stack (a host RangeError,
    // the engine left half-way through its frames) instead of QuickJS's own limit.
    const s = sandbox();
    const code = `function depth() { let d = 0; function f() { d++; f() } try { f() } catch (e) { if (e.name !== 'InternalError') throw e } return d }
      const outside = depth(); let inside = -1; const fill = Int8Array.prototype.fill;
      Int8Array.prototype.fill = function (...a) { Int8Array.prototype.fill = fill; inside = depth(); return fill.apply(this, a) };
      typeof atob; [inside > 0, inside <= outside]`;
    expect(await value(s, code)).toEqual([true, true]);
    expect(s.broken).toBe(false);
  });

  it("a chunk whose first load keeps failing cannot take the evaluation past its cpuMs", async () => {
    // A parse is never interrupted and a short loop polls the interrupt handler rarely: 100
    // failed loads of the URL chunk ran for seconds under a 300 ms limit and ended "ok".
    const s = sandbox({ limits: { cpuMs: 300 } });
    const r = await s.evaluate(`const dp = Object.defineProperty;
      for (let i = 0; i < 100; i++) {
        Object.defineProperty = () => { throw new Error('no') };
        try { URL } catch {} finally { Object.defineProperty = dp }
      }
      'done'`);
    expect([r.status, r.limit]).toEqual(["timeout", "cpu_ms"]);
    const after = await s.evaluate("new URL('http://b\u00fccher.example/').host", { limits: { cpuMs: 10_000 } }); // loads the chunks
    expect(after.value?.json).toBe("xn--bcher-kva.example");
  });

  it("at most 1,024 digests are in progress at once: the rest reject, and later ones work", async () => {
    const s = sandbox();
    // The engine's memory is grown first: a host promise made while it grows can fail inside
    // quickjs-emscripten (about once in 14,000 calls), which this test is not about.
    const code = `{ let grow = new Array(4e6).fill(0); grow = null; }
      const d = new Uint8Array(1), all = [];
      for (let i = 0; i < 1100; i++) all.push(crypto.subtle.digest('SHA-1', d).then(() => 'ok', (e) => e.name));
      const r = await Promise.all(all), count = (x) => r.filter((y) => y === x).length;
      [count('ok') >= 1020, count('RangeError'), new Uint8Array(await crypto.subtle.digest('SHA-1', d)).length]`;
    expect(await value(s, code)).toEqual([true, 76, 20]);
  });

  it("a first host call needing the formatting helpers once the heap is full leaves the engine usable", async () => {
    // The helpers' compile then failed half-way inside quickjs-emscripten (unchecked mallocs),
    // corrupting the engine's heap: every sandbox made afterwards failed its bootstrap.
    for (const call of ["console.log('x')", "crypto.subtle.digest('SHA-1', new Uint8Array(1))"]) {
      const s = sandbox({ limits: { memMb: 16 } });
      const r = await s.evaluate(`const keep = []; try { for (;;) keep.push(new Array(1000).fill(1)) } catch {}
        for (let i = 0; i < 50; i++) { try { ${call} } catch {} }`);
      expect(["ok", "error"]).toContain(r.status);
      expect(await value(sandbox(), "[1, 2, 3].map((x) => x * 2).join() + typeof URL"), call).toBe("2,4,6function");
    }
  });

  it("getRandomValues refuses more than 65,536 bytes, non-integer arrays and non-views", async () => {
    const s = sandbox();
    const code =
      `[new Uint8Array(65537), new Uint32Array(16385), new BigInt64Array(8193), new Float32Array(1), new Float64Array(1), new DataView(new ArrayBuffer(4)),
      new ArrayBuffer(4), [1, 2], { length: 4, buffer: new ArrayBuffer(4) }, null].map((a) => {
        try { crypto.getRandomValues(a); return 'filled' } catch (e) { return e.name }
      })`;
    expect(await value(s, code)).toEqual([
      "QuotaExceededError",
      "QuotaExceededError",
      "QuotaExceededError",
      "TypeMismatchError",
      "TypeMismatchError",
      "TypeMismatchError",
      "TypeMismatchError",
      "TypeMismatchError",
      "TypeMismatchError",
      "TypeMismatchError",
    ]);
    expect(await value(s, "crypto.getRandomValues(new Uint8Array(65536)).length")).toBe(65536);
  });

  it("getRandomValues fills a view over a SharedArrayBuffer or an offset view exactly where it points", async () => {
    const s = sandbox({ random: (b) => b.fill(9) });
    const code = `const sab = typeof SharedArrayBuffer === 'function' ? new SharedArrayBuffer(8) : new ArrayBuffer(8);
      crypto.getRandomValues(new Uint8Array(sab, 2, 3)); [...new Uint8Array(sab)]`;
    expect(await value(s, code)).toEqual([0, 0, 9, 9, 9, 0, 0, 0]);
  });

  it("a getter on a typed array cannot make the host fill more than it was asked", async () => {
    let asked = 0;
    const s = sandbox({ random: (b) => void (asked = Math.max(asked, b.length)) });
    const code = `const a = new Uint8Array(4); Object.defineProperty(a, 'byteLength', { get: () => 1e9 });
      Object.defineProperty(a, 'length', { get: () => 1e9 }); crypto.getRandomValues(a) === a`;
    expect(await value(s, code)).toBe(true);
    expect(asked).toBe(4);
  });

  it("patched prototypes do not change what crosses to the host", async () => {
    let asked = 0;
    const s = sandbox({ random: (b) => void (asked = b.length) });
    await value(s, "Object.defineProperty(Object.getPrototypeOf(Uint8Array.prototype), 'byteLength', { get: () => 1 << 30 }); 0");
    const r = await s.evaluate("crypto.getRandomValues(new Uint8Array(8))");
    expect(asked === 0 || asked <= 65536).toBe(true);
    expect(["ok", "error"]).toContain(r.status);
  });

  it("structuredClone of host-made values gives sandbox values, and of proxies and revoked proxies fails cleanly", async () => {
    const s = sandbox({ modules: { m: { functions: { give: () => ({ a: [1, { b: new Uint8Array(0).length }] }), bytes: () => new Uint8Array([1, 2]) } } } });
    expect(
      await value(
        s,
        "const m = require('m'); const c = structuredClone(m.give()); const b = structuredClone(m.bytes()); [c, [...b], b.constructor === Uint8Array]",
      ),
    )
      .toEqual([{ a: [1, { b: 0 }] }, [1, 2], true]);
    expect(
      await value(
        s,
        "const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); (() => { try { structuredClone(proxy); return 'cloned' } catch (e) { return e.name } })()",
      ),
    )
      .toBe("TypeError");
    expect(await value(s, "(() => { try { structuredClone(require('m')) } catch (e) { return e.name } })()")).toBe("DataCloneError");
  });

  it("digest's host call copies the data when it is called", async () => {
    const s = sandbox();
    const code = `const d = new Uint8Array([1, 2, 3]); const p = crypto.subtle.digest('SHA-256', d); d.fill(0);
      const a = new Uint8Array(await p), b = new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array([1, 2, 3])));
      a.every((x, i) => x === b[i])`;
    expect(await value(s, code)).toBe(true);
  });
});
