/** Node entry: `npm run routes -- <command> [flags]`. Handlers run on worker threads (node-thread.ts). */
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { nodeFileTree } from "../../lib/adapters/node-files.ts";
import { nodeThreadSpawner } from "../../lib/adapters/node-threads.ts";
import { uiDirectoryOf } from "../sessions/cli.ts";
import { createNodeThreadRuntimes } from "../sessions/live/node-threads.ts";
import { runRoutesCli } from "./cli.ts";

const files = nodeFileTree();
await runRoutesCli(nodeRuntime(), { files, spawnScriptThread: nodeThreadSpawner(new URL("./node-thread.ts", import.meta.url)), sessions: { files, threadRuntimes: createNodeThreadRuntimes, uiDirectory: uiDirectoryOf(new URL("../sessions/ui/dist", import.meta.url)) } });
