/** Entry of each handler thread on Node (spawned by apps/routes/entries/node.ts). */
import { nodeThreadEndpoint } from "#lib/adapters/node/thread-endpoint";
import { serveScriptThread } from "../script/script-side.ts";

serveScriptThread(nodeThreadEndpoint());
