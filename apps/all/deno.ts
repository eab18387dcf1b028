/** `deno task dev`: every service under Deno. */
import { denoRuntime } from "../../lib/adapters/deno.ts";
import { denoFileTree } from "../../lib/adapters/deno-files.ts";
import { createDenoThreadRuntimes } from "../sessions/live/deno-threads.ts";
import { startAll } from "./start.ts";

await startAll(denoRuntime(), { files: denoFileTree(), threadRuntimes: createDenoThreadRuntimes });
