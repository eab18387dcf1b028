/** `deno task dev`: every service under Deno. */
import { denoRuntime } from "../../lib/adapters/deno.ts";
import { denoFileTree } from "../../lib/adapters/deno-files.ts";
import { denoThreadSpawner } from "../../lib/adapters/deno-threads.ts";
import { uiDirectoryOf } from "../sessions/cli.ts";
import { createDenoThreadRuntimes } from "../sessions/live/deno-threads.ts";
import { startAll } from "./start.ts";

const files = denoFileTree();
const sessions = { files, threadRuntimes: createDenoThreadRuntimes, uiDirectory: uiDirectoryOf(new URL("../sessions/ui/dist", import.meta.url)) };
await startAll(denoRuntime(), sessions, { files, spawnScriptThread: denoThreadSpawner(new URL("../routes/deno-thread.ts", import.meta.url)), sessions });
