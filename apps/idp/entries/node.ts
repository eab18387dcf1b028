/** Node entry: `npm run idp -- <command> [flags]` (node lib/adapters/node/run.mjs apps/idp/entries/node.ts), or through tsx. */
import { nodeRuntime } from "#lib/adapters/node";
import { runIdpCli } from "../cli.ts";

await runIdpCli(nodeRuntime());
