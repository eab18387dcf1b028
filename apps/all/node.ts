/** `npm start`: every service under Node. */
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { startAll } from "./start.ts";

await startAll(nodeRuntime());
