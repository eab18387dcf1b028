import { describe, expect, it } from "vitest";
import type { HostValue, Sandbox } from "./index.ts";
import { sandboxesPerTest } from "./testing.ts";

const { sandbox } = sandboxesPerTest();
async function value(s: Sandbox, code: string): Promise<unknown> {
  const r = await s.evaluate(code);
  if (r.status !== "ok") throw new Error(`${r.status}: ${r.error?.stack ?? r.limit}`);
  return r.value?.json;
}

describe("isolation", () => {
  it("has no host globals", async () => {
    const s = sandbox();
    expect(await value(s, "[typeof process, typeof Deno, typeof fetch, typeof std, typeof os, typeof Bun, typeof globalThis.global]"))
      .toEqual(
        Array(7).fill("undefined"),
      );
  });

  it("the timer globals are sandbox functions, whose results are plain numbers", async () => {
    const s = sandbox();
    const code = "const t = setTimeout(() => {}, 0); clearTimeout(t); [typeof t, setTimeout.constructor === Function, " +
      "Object.getPrototypeOf(setInterval) === Function.prototype, (() => { try { return setTimeout.call(1, 2) } catch (e) { return e.name } })()]";
    expect(await value(s, code)).toEqual(["number", true, true, "TypeError"]);
  });

  it("require reaches only the given modules", async () => {
    const s = sandbox();
    for (const name of ["fs", "node:fs", "child_process", "std", "os"]) {
      const r = await s.evaluate(`require(${JSON.stringify(name)})`);
      expect(r.error?.message).toBe(`Cannot find module '${name}'`);
    }
  });

  it("dynamic import and module syntax cannot load anything", async () => {
    const s = sandbox();
    const r = await s.evaluate("await import('fs')");
    expect(r.status).toBe("error");
    expect(r.error?.message).toBe("Cannot find module 'fs'");
    const r2 = await s.evaluate("import('/etc/passwd').then(() => 'loaded', (e) => 'refused')");
    expect(r2.value?.json).toBe("refused");
  });

  it("eval and Function stay inside the sandbox", async () => {
    const s = sandbox();
    expect(await value(s, "Function('return typeof this.process')()")).toBe("undefined");
    expect(await value(s, "(0, eval)('typeof process')")).toBe("undefined");
    expect(await value(s, "(function(){}).constructor('return globalThis')() === globalThis")).toBe(true);
    expect(await value(s, "(async function(){}).constructor('return 1').constructor.constructor('return typeof process')()")).toBe("undefined");
  });

  it("host functions expose no host objects", async () => {
    const s = sandbox({ modules: { m: { functions: { f: () => ({ a: 1 }) } } } });
    expect(await value(s, "const m = require('m'); m.f.constructor === Function")).toBe(true);
    expect(await value(s, "m.f.constructor('return typeof process')()")).toBe("undefined");
    expect(await value(s, "Object.getPrototypeOf(m.f()) === Object.prototype")).toBe(true);
  });

  it("values are copied: the sandbox cannot touch host prototypes or objects", async () => {
    const hostObj = { list: [1, 2], nested: { a: 1 } };
    let received: unknown;
    const s = sandbox({
      globals: { data: hostObj },
      modules: { m: { functions: { give: () => hostObj, take: (v: HostValue) => void (received = v) } } },
    });
    await value(s, "data.__proto__.polluted = 1; data.list.push(3); data.nested.a = 2; Object.prototype.polluted2 = 1; Array.prototype.evil = 1");
    await value(s, "const r = require('m').give(); r.__proto__.polluted3 = 1; r.list.push(4)");
    await value(s, 'require(\'m\').take(JSON.parse(\'{"__proto__": {"polluted4": 1}, "ok": 1}\'))');
    expect(hostObj).toEqual({ list: [1, 2], nested: { a: 1 } });
    const probe = {} as Record<string, unknown>;
    for (const k of ["polluted", "polluted2", "polluted3", "polluted4"]) expect(probe[k]).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).evil).toBeUndefined();
    expect(received).toEqual({ ok: 1 });
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(received, "__proto__")).toBe(false);
  });

  it("sandboxes do not share globals", async () => {
    const a = sandbox();
    const b = sandbox();
    await value(a, "globalThis.shared = 1; Object.prototype.x = 1");
    expect(await value(b, "[typeof shared, typeof ({}).x]")).toEqual(["undefined", "undefined"]);
  });

  it("a global setter placed by the sandbox does not run on setGlobal", async () => {
    const s = sandbox({ limits: { cpuMs: 50 } });
    await value(s, "Object.defineProperty(globalThis, 'args', { set() { while (true) {} }, get() { return 'trap' }, configurable: true })");
    s.setGlobal("args", ["x"]);
    expect(await value(s, "args")).toEqual(["x"]);
  });

  it("patching built-ins does not break console capture", async () => {
    const s = sandbox();
    const texts: string[] = [];
    await s.evaluate("JSON.stringify = () => { throw 1 }; Array.prototype.join = () => 'hacked'; Object.keys = null; console.log('a', [1, 2], {b: 1})", {
      onEvent: (e) => {
        if (e.type === "console") texts.push(e.payload.text);
      },
    });
    expect(texts).toEqual(["a [ 1, 2 ] { b: 1 }"]);
  });
});
