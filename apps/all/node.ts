/** `npm start`: every service under Node. */
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { nodeFileTree } from "../../lib/adapters/node-files.ts";
import { nodeThreadSpawner } from "../../lib/adapters/node-threads.ts";
import { uiDirectoryOf } from "../sessions/cli.ts";
import { createNodeThreadRuntimes } from "../sessions/live/node-threads.ts";
import { startAll } from "./start.ts";

const files = nodeFileTree();
const sessions = { files, threadRuntimes: createNodeThreadRuntimes, uiDirectory: uiDirectoryOf(new URL("../sessions/ui/dist", import.meta.url)) };
await startAll(nodeRuntime(), sessions, { files, spawnScriptThread: nodeThreadSpawner(new URL("../routes/node-thread.ts", import.meta.url)), sessions });
