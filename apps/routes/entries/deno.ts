/** Deno entry: `deno run -A apps/routes/entries/deno.ts <command> [flags]`. Handlers run on Web Workers (deno-thread.ts). */
import { denoRuntime } from "#lib/adapters/deno";
import { denoFileTree } from "#lib/adapters/deno/files";
import { denoThreadSpawner } from "#lib/adapters/deno/threads";
import { denoSessionsHost } from "../../sessions/entries/deno-host.ts";
import { runRoutesCli } from "../cli.ts";

const files = denoFileTree();
await runRoutesCli(denoRuntime(), {
  files,
  spawnScriptThread: denoThreadSpawner(new URL("./deno-thread.ts", import.meta.url)),
  sessions: denoSessionsHost(files),
});
