/**
 * The live layer's per-session costs (apps/sessions/live) against the bare sandbox library they
 * are built on, measured in the same run.
 * Run: npx tsx bench/session-runtime.bench.ts   (add --no-rss to skip the 10,000-session probe)
 */
import { memoryFileTree } from "../lib/files/r2.ts";
import { createSandbox, loadQuickJS } from "../lib/sandbox/index.ts";
import { createInProcessRuntimes } from "../apps/sessions/live/in-process.ts";
import { SessionRuntime } from "../apps/sessions/live/session-runtime.ts";
import { sessionSpec } from "../apps/sessions/live/testing.ts";
import type { LiveRuntimeOptions } from "../apps/sessions/live/types.ts";

async function p50(n: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b)[n >> 1]!;
}

const engine = await loadQuickJS();
const options: LiveRuntimeOptions = { worktrees: memoryFileTree() };
const spec = sessionSpec({ modules: ["fs", "path", "http", "env"] });
const noEvents = () => {};

const sandboxCreate = await p50(2000, () => createSandbox(engine).dispose());
const sessionCreate = await p50(2000, async () => (await SessionRuntime.open(engine, spec, options)).close());
const sandbox = createSandbox(engine);
const sandboxEval = await p50(20000, () => sandbox.evaluate("undefined"));
const session = await SessionRuntime.open(engine, spec, options);
const sessionEval = await p50(20000, () => session.execute({ kind: "repl", input: "undefined" }, noEvents));
const sessionLog = await p50(5000, () => session.execute({ kind: "repl", input: "console.log('a', 1, {b: 2})" }, noEvents));
sandbox.dispose();
session.close();

const ms = (v: number) => (v < 0.1 ? `${(v * 1000).toFixed(1)} µs` : `${v.toFixed(3)} ms`);
const rows: [string, number, number][] = [
  ["create + dispose (open + close)", sessionCreate, sandboxCreate],
  ["no-op REPL execute", sessionEval, sandboxEval],
];
console.log(`node ${process.version}, p50 of repeated runs\n`);
console.log("operation                        | SessionRuntime | lib/sandbox | ratio");
console.log("---------------------------------|----------------|-------------|------");
for (const [name, a, b] of rows) console.log(`${name.padEnd(33)}| ${ms(a).padEnd(15)}| ${ms(b).padEnd(12)}| ${(a / b).toFixed(1)}x`);
console.log(`${"console.log(3 args) execute".padEnd(33)}| ${ms(sessionLog).padEnd(15)}| -           | -`);

if (!process.argv.includes("--no-rss")) {
  const runtimes = createInProcessRuntimes(engine, options);
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const t = performance.now();
  for (let i = 0; i < 10_000; i++) await runtimes.open(sessionSpec({ sessionId: `idle-${i}`, modules: ["fs", "path"] }));
  const created = performance.now() - t;
  const rss = process.memoryUsage().rss;
  console.log(
    `\n10000 live idle sessions (in-process): RSS ${(rss / 2 ** 20).toFixed(0)} MiB total, +${((rss - before) / 2 ** 20).toFixed(0)} MiB ` +
      `(${((rss - before) / 10_000 / 1024).toFixed(1)} KiB each), opened in ${created.toFixed(0)} ms`,
  );
  await runtimes.shutdown();
}
