/** `deno task dev`: every service under Deno. */
import { denoRuntime } from "#lib/adapters/deno";
import { denoFileTree } from "#lib/adapters/deno/files";
import { denoThreadSpawner } from "#lib/adapters/deno/threads";
import { denoSessionsHost } from "../../sessions/entries/deno-host.ts";
import { startAll } from "../start.ts";

const files = denoFileTree();
const sessions = denoSessionsHost(files);
await startAll(denoRuntime(), sessions, {
  files,
  spawnScriptThread: denoThreadSpawner(new URL("../../routes/entries/deno-thread.ts", import.meta.url)),
  sessions,
});
