/** Deno entry: `deno run -A apps/sessions/entries/deno.ts serve [flags]`. Worktrees and libraries on the
 * host file system; sandboxes on Web Workers (apps/sessions/entries/deno-thread.ts). */
import { denoRuntime } from "#lib/adapters/deno";
import { runSessionsCli } from "../cli.ts";
import { denoSessionsHost } from "./deno-host.ts";

await runSessionsCli(denoRuntime(), denoSessionsHost());
