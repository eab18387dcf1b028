/** Node entry: `tsx apps/sessions/node.ts serve [flags]`. Worktrees and libraries on the host file
 * system; sandboxes on worker threads (apps/sessions/node-thread.ts). */
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { nodeFileTree } from "../../lib/adapters/node-files.ts";
import { runSessionsCli, uiDirectoryOf } from "./cli.ts";
import { createNodeThreadRuntimes } from "./live/node-threads.ts";

await runSessionsCli(nodeRuntime(), { files: nodeFileTree(), threadRuntimes: createNodeThreadRuntimes, uiDirectory: uiDirectoryOf(new URL("./ui/dist", import.meta.url)) });
