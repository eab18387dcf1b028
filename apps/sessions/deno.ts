/** Deno entry: `deno run -A apps/sessions/deno.ts <command> [flags]`. */
import { denoRuntime } from "../../lib/adapters/deno.ts";
import { runSessionsCli } from "./cli.ts";

await runSessionsCli(denoRuntime());
