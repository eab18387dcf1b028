/** Deno entry: `deno run -A apps/idp/entries/deno.ts <command> [flags]`. */
import { denoRuntime } from "#lib/adapters/deno";
import { runIdpCli } from "../cli.ts";

await runIdpCli(denoRuntime());
