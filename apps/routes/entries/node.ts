/**
 * Node entry: `npm run routes -- <command> [flags]`. Handlers run on worker threads
 * (node-thread.ts). The first thread starts before anything else loads, so its boot overlaps the
 * loading of the host itself (node-main.ts, a bundle of its own): a cold start answers ~40 ms
 * sooner (bench/routes.bench.ts).
 */
import { setFlagsFromString } from "node:v8";
import { bundledProcessEntry } from "#lib/adapters/node/bundle";
import { nodeThreadSpawner } from "#lib/adapters/node/threads";
import type { SpawnScriptThread } from "../script/runtime.ts";

/**
 * V8 hands a hot wasm function to its optimizing compiler once about this many bytes of its code
 * have run (V8's default). QuickJS's interpreter gets there while the first thread loads the
 * script, and optimizing it then costs 100-150 ms of CPU in a cold process, on the cold start's
 * critical path (docs/benchmarks.md, first answer).
 */
const WASM_TIERING_BUDGET = 1_800_000;
/**
 * The first thread's budget (V8 reads the flag when a thread instantiates its engine, and the
 * flags are the process's): its script load stays on the baseline compiler, ~55 ms of CPU rather
 * than ~200, and its interpreter is optimized while it serves instead (its handlers are ~8% slower
 * for their first ~100,000 calls). Threads started later have V8's default.
 */
const COLD_WASM_TIERING_BUDGET = 1_000_000_000;

setFlagsFromString(`--wasm-tiering-budget=${COLD_WASM_TIERING_BUDGET}`);
const spawnThread: SpawnScriptThread = nodeThreadSpawner(new URL("./node-thread.ts", import.meta.url), { startOne: true });
let spawned = 0;
const spawnScriptThread: SpawnScriptThread = () => {
  // The others start once the first has loaded the script (apps/routes/script/runtime.ts).
  if (++spawned === 2) setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
  return spawnThread();
};
const main = new URL("./node-main.ts", import.meta.url);
const { runRoutesOnNode } = (await import((await bundledProcessEntry(main))?.href ?? main.href)) as typeof import("./node-main.ts");
await runRoutesOnNode(spawnScriptThread);
