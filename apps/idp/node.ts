/** Node entry: `tsx apps/idp/node.ts <command> [flags]`. */
import { nodeRuntime } from "../../lib/adapters/node.ts";
import { runIdpCli } from "./cli.ts";

await runIdpCli(nodeRuntime());
