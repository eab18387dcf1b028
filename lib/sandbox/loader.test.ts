import { describe, expect, it } from "vitest";
import { createSandbox, type SourceResolver } from "./index.ts";
import { sandboxesPerTest } from "./testing.ts";

const { sandbox, engine } = sandboxesPerTest();

/** Files by canonical name; specifiers resolve relative to the importer (or "/"), + ".js". */
function files(map: Record<string, string>, log: string[] = []): SourceResolver {
  return {
    resolve(spec, importer) {
      log.push(`${spec}@${importer ?? "-"}`);
      if (spec === "/forbidden") throw new Error("absolute imports are not allowed");
      const base = importer ? importer.slice(0, importer.lastIndexOf("/") + 1) : "/";
      const parts: string[] = [];
      for (const seg of (spec.startsWith("/") ? spec : base + spec).split("/")) {
        if (seg === "" || seg === ".") continue;
        if (seg === "..") parts.pop();
        else parts.push(seg);
      }
      const name = "/" + parts.join("/");
      for (const candidate of [name, name + ".js"]) if (candidate in map) return candidate;
      return undefined;
    },
    source: (name) => map[name]!,
  };
}

describe("require of source files (CommonJS)", () => {
  it("loads relative to the requiring file, with module, exports, __filename", async () => {
    const s = sandbox();
    const sources = files({
      "/lib/a.js": "const b = require('./b'); module.exports = { a: 1, b: b.b, file: __filename, dir: __dirname };",
      "/lib/b.js": "exports.b = 2;",
    });
    const r = await s.evaluate("require('./lib/a')", { sources });
    expect(r.value?.json).toEqual({ a: 1, b: 2, file: "/lib/a.js", dir: "/lib" });
  });

  it("evaluates a file once per text, and again when its text changes", async () => {
    const s = sandbox();
    const map = { "/counter.js": "let n = 0; exports.inc = () => ++n;" };
    await s.evaluate("require('./counter').inc()", { sources: files(map) });
    expect((await s.evaluate("require('./counter').inc()", { sources: files(map) })).value?.json).toBe(2);
    const changed = { "/counter.js": "let n = 10; exports.inc = () => ++n;" };
    expect((await s.evaluate("require('./counter').inc()", { sources: files(changed) })).value?.json).toBe(11);
  });

  it("gives a require cycle the partial exports", async () => {
    const s = sandbox();
    const sources = files({
      "/a.js": "exports.early = 1; const b = require('./b'); exports.fromB = b.sawEarly;",
      "/b.js": "exports.sawEarly = require('./a').early;",
    });
    expect((await s.evaluate("require('./a').fromB", { sources })).value?.json).toBe(1);
  });

  it("resolves the global require from the evaluated file", async () => {
    const s = sandbox();
    const log: string[] = [];
    await s.evaluate("require('./x')", { sources: files({ "/dir/x.js": "" }, log), filename: "/dir/main.js", mode: "script" });
    expect(log).toEqual(["./x@/dir/main.js"]);
  });

  it("reports missing files, resolver errors and a throwing file as errors", async () => {
    const s = sandbox();
    const sources = files({ "/bad.js": "throw new TypeError('boom')" });
    const missing = await s.evaluate("require('./nope')", { sources });
    expect(missing.error?.message).toBe("Cannot find module './nope'");
    expect((await s.evaluate("require('/forbidden')", { sources })).error?.message).toBe("absolute imports are not allowed");
    const bad = await s.evaluate("require('./bad')", { sources });
    expect(bad.error).toMatchObject({ name: "TypeError", message: "boom" });
    expect(bad.error?.stack).toContain("/bad.js");
    expect((await s.evaluate("require('./x')")).error?.message).toBe("Cannot find module './x'");
  });

  it("native modules win over files for bare names", async () => {
    const s = sandbox({ modules: { m: { values: { native: true } } } });
    expect((await s.evaluate("require('m').native", { sources: files({ "/m.js": "exports.native = false" }) })).value?.json).toBe(true);
  });
});

describe("ES modules", () => {
  it("evaluates a module with static imports of files and native modules", async () => {
    const s = sandbox({ modules: { fs: { functions: { read: (p) => `text of ${String(p)}` }, values: { sep: "/" } } } });
    const sources = files({ "/lib/util.js": "export const twice = (x) => x * 2; export default 'dflt';" });
    const code =
      "import fs, { read, sep } from 'fs'; import d, { twice } from './lib/util.js'; globalThis.out = [twice(21), d, read('a'), sep, typeof fs.read]; await 0;";
    const r = await s.evaluate(code, { mode: "module", filename: "/main.js", sources });
    expect(r.status).toBe("ok");
    expect(r.value).toBeUndefined();
    expect((await s.evaluate("out")).value?.json).toEqual([42, "dflt", "text of a", "/", "function"]);
  });

  it("module errors and missing imports are errors", async () => {
    const s = sandbox();
    const sources = files({ "/t.js": "throw new Error('in module')" });
    expect((await s.evaluate("import './nope.js'", { mode: "module", filename: "/m.js", sources })).error?.message).toBe("Cannot find module './nope.js'");
    expect((await s.evaluate("import './t.js'", { mode: "module", filename: "/m.js", sources })).error?.message).toBe("in module");
  });

  it("dynamic import works from a REPL input, and a changed file is loaded again", async () => {
    const s = sandbox();
    const v1 = files({ "/m.js": "export const v = 1;" });
    expect((await s.evaluate("(await import('./m.js')).v", { sources: v1 })).value?.json).toBe(1);
    expect((await s.evaluate("(await import('./m.js')).v", { sources: v1 })).value?.json).toBe(1);
    const v2 = files({ "/m.js": "export const v = 2;" });
    expect((await s.evaluate("(await import('./m.js')).v", { sources: v2 })).value?.json).toBe(2);
  });
});

describe("per-evaluation globals", () => {
  it("are visible during the evaluation and put back afterwards", async () => {
    const s = sandbox();
    await s.evaluate("globalThis.env = 'mine'");
    const r = await s.evaluate("[args, env.A]", { globals: { args: { x: 1 }, env: { A: "a" } } });
    expect(r.value?.json).toEqual([{ x: 1 }, "a"]);
    expect((await s.evaluate("[typeof args, env]")).value?.json).toEqual(["undefined", "mine"]);
  });

  it("work over a var declared by earlier code, and are restored after a timeout", async () => {
    const s = sandbox({ limits: { cpuMs: 50 } });
    await s.evaluate("var args = 'declared'");
    expect((await s.evaluate("args", { globals: { args: [1] } })).value?.json).toEqual([1]);
    expect((await s.evaluate("args")).value?.json).toBe("declared");
    expect((await s.evaluate("for(;;){}", { globals: { args: [2] } })).status).toBe("timeout");
    expect((await s.evaluate("args")).value?.json).toBe("declared");
  });

  it("a polluted Object.prototype does not break defining globals", async () => {
    const s = sandbox();
    await s.evaluate("Object.prototype.get = function () { return 'trap' }; Object.prototype.value = 'trap'");
    expect((await s.evaluate("args", { globals: { args: [1] } })).value?.json).toEqual([1]);
    s.setGlobal("later", 5);
    expect((await s.evaluate("[later, typeof args]")).value?.json).toEqual([5, "undefined"]);
  });
});

describe("module globals", () => {
  it("expose a native module as a global", async () => {
    const s = sandbox({ modules: { path: { functions: { join: (...p) => p.join("/") } } }, moduleGlobals: { path: "path" } });
    expect((await s.evaluate("path.join('a', 'b') + (path === require('path'))")).value?.json).toBe("a/btrue");
  });

  it("refuse a module that is not there", () => {
    expect(() => createSandbox(engine(), { moduleGlobals: { x: "nope" } })).toThrow(/no native module/);
  });
});
