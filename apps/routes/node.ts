/**
 * Node entry: `npm run routes -- <command> [flags]`. Handlers run on worker threads
 * (node-thread.ts). The first thread starts before anything else loads, so its boot overlaps the
 * loading of the host itself (node-main.ts, a bundle of its own): a cold start answers ~40 ms
 * sooner (bench/routes.bench.ts).
 */
import { bundledProcessEntry } from "#lib/adapters/node-bundle";
import { nodeThreadSpawner } from "#lib/adapters/node-threads";
import type { SpawnScriptThread } from "./script/runtime.ts";

const spawnScriptThread: SpawnScriptThread = nodeThreadSpawner(new URL("./node-thread.ts", import.meta.url), { startOne: true });
const main = new URL("./node-main.ts", import.meta.url);
const { runRoutesOnNode } = (await import((await bundledProcessEntry(main))?.href ?? main.href)) as typeof import("./node-main.ts");
await runRoutesOnNode(spawnScriptThread);
