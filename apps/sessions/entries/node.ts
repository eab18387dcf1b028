/** Node entry: `tsx apps/sessions/entries/node.ts serve [flags]`. Worktrees and libraries on the host file
 * system; sandboxes on worker threads (apps/sessions/entries/node-thread.ts). */
import { nodeRuntime } from "#lib/adapters/node";
import { runSessionsCli } from "../cli.ts";
import { nodeSessionsHost } from "./node-host.ts";

await runSessionsCli(nodeRuntime(), nodeSessionsHost());
