/** `npm start`: every service under Node. */
import { nodeRuntime } from "#lib/adapters/node";
import { nodeFileTree } from "#lib/adapters/node/files";
import { nodeThreadSpawner } from "#lib/adapters/node/threads";
import { nodeSessionsHost } from "../../sessions/entries/node-host.ts";
import { startAll } from "../start.ts";

const files = nodeFileTree();
const sessions = nodeSessionsHost(files);
await startAll(nodeRuntime(), sessions, {
  files,
  spawnScriptThread: nodeThreadSpawner(new URL("../../routes/entries/node-thread.ts", import.meta.url)),
  sessions,
});
