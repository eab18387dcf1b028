/** Deno entry: `deno run -A apps/sessions/deno.ts serve [flags]`. Worktrees and libraries on the
 * host file system; sandboxes on Web Workers (apps/sessions/deno-thread.ts). */
import { denoRuntime } from "../../lib/adapters/deno.ts";
import { denoFileTree } from "../../lib/adapters/deno-files.ts";
import { runSessionsCli, uiDirectoryOf } from "./cli.ts";
import { createDenoThreadRuntimes } from "./live/deno-threads.ts";

await runSessionsCli(denoRuntime(), { files: denoFileTree(), threadRuntimes: createDenoThreadRuntimes, uiDirectory: uiDirectoryOf(new URL("./ui/dist", import.meta.url)) });
