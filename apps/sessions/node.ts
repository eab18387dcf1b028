/** Node entry: `tsx apps/sessions/node.ts <command> [flags]`. */
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { runSessionsCli } from "./cli.ts";

await runSessionsCli(nodeRuntime());
