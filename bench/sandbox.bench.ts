/**
 * lib/sandbox costs against raw quickjs-emscripten and node:vm (an unsandboxed floor).
 * Run: npx tsx bench/sandbox.bench.ts   (add --no-rss to skip the 10,000-sandbox RSS probe)
 */
import vm from "node:vm";
import { createSandbox, loadQuickJS, type Sandbox } from "../lib/sandbox/index.ts";

function p50(samples: number[]): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** p50 of `fn` in ms over `n` runs after `warm` warm-up runs. */
async function measure(n: number, fn: () => unknown, warm = Math.min(200, n)): Promise<number> {
  for (let i = 0; i < warm; i++) await fn();
  const out: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out[i] = performance.now() - t;
  }
  return p50(out);
}

const LOOP = "(() => { let s = 0; for (let i = 0; i < 10000; i++) s += i; return s })()";
const engine = await loadQuickJS();

// Raw engine
const rawCreate = await measure(2000, () => {
  const rt = engine.newRuntime();
  const ctx = rt.newContext();
  ctx.dispose();
  rt.dispose();
});
const rawRt = engine.newRuntime();
const rawCtx = rawRt.newContext();
const rawEval = await measure(20000, () => rawCtx.evalCode("undefined", "x", { type: "global" }).dispose());
const rawLoop = await measure(500, () => rawCtx.evalCode(LOOP, "x", { type: "global" }).dispose());
rawCtx.dispose();
rawRt.dispose();

// lib/sandbox
const sbCreate = await measure(2000, () => createSandbox(engine).dispose());
const sb = createSandbox(engine);
const sbEval = await measure(20000, () => sb.evaluate("undefined"));
const sbEvalSync = await measure(20000, () => sb.evaluateSync("undefined"));
const sbEvalValue = await measure(20000, () => sb.evaluate("1+1"));
const sbLoop = await measure(500, () => sb.evaluate(LOOP));
const sbConsole = await measure(5000, () => sb.evaluate("console.log('hello', 1, {a: [1, 2]})"));
sb.dispose();

// node:vm floor
const vmCreate = await measure(500, () => vm.createContext({}));
const vmCtx = vm.createContext({});
const vmEval = await measure(20000, () => vm.runInContext("undefined", vmCtx));
const vmLoop = await measure(500, () => vm.runInContext(LOOP, vmCtx));

const fmt = (ms: number) => (ms < 0.1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(3)} ms`);
const rows: [string, number, number, number][] = [
  ["create + dispose", sbCreate, rawCreate, vmCreate],
  ["no-op evaluate (async)", sbEval, rawEval, vmEval],
  ["no-op evaluateSync", sbEvalSync, rawEval, vmEval],
  ["evaluate 1+1 (value event)", sbEvalValue, rawEval, vmEval],
  ["10,000-iteration loop", sbLoop, rawLoop, vmLoop],
  ["console.log(3 args)", sbConsole, NaN, NaN],
];
console.log(`node ${process.version}, p50 of repeated runs\n`);
console.log("operation                     | lib/sandbox | raw QuickJS | node:vm   | vs raw | vs vm");
console.log("------------------------------|-------------|-------------|-----------|--------|-------");
for (const [name, s, r, v] of rows) {
  const ratio = (a: number, b: number) => (Number.isFinite(b) ? `${(a / b).toFixed(1)}x` : "-");
  console.log(
    `${name.padEnd(30)}| ${fmt(s).padEnd(12)}| ${(Number.isFinite(r) ? fmt(r) : "-").padEnd(12)}| ${(Number.isFinite(v) ? fmt(v) : "-").padEnd(10)}| ${ratio(s, r).padEnd(7)}| ${ratio(s, v)}`,
  );
}

if (!process.argv.includes("--no-rss")) {
  const N = 10_000;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().rss;
  const many: Sandbox[] = [];
  const t = performance.now();
  for (let i = 0; i < N; i++) many.push(createSandbox(engine));
  const took = performance.now() - t;
  gc?.();
  const after = process.memoryUsage().rss;
  console.log(
    `\n${N} live idle sandboxes: RSS ${(after / 2 ** 20).toFixed(0)} MiB total, +${((after - before) / 2 ** 20).toFixed(0)} MiB ` +
      `(${((after - before) / N / 1024).toFixed(1)} KiB each), created in ${took.toFixed(0)} ms; wasm heap ${(engine.getWasmMemory().buffer.byteLength / 2 ** 20).toFixed(0)} MiB`,
  );
  for (const s of many) s.dispose();
}
