/** `npm start`: every service under Node. */
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { nodeFileTree } from "../../lib/adapters/node-files.ts";
import { createNodeThreadRuntimes } from "../sessions/live/node-threads.ts";
import { startAll } from "./start.ts";

await startAll(nodeRuntime(), { files: nodeFileTree(), threadRuntimes: createNodeThreadRuntimes });
