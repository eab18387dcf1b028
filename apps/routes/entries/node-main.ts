/** The route host's command line on Node, loaded by node.ts once the first handler thread is on its way. */
import { nodeRuntime } from "#lib/adapters/node";
import { nodeFileTree } from "#lib/adapters/node/files";
import { nodeSessionsHost } from "../../sessions/entries/node-host.ts";
import { runRoutesCli } from "../cli.ts";
import type { SpawnScriptThread } from "../script/runtime.ts";

export async function runRoutesOnNode(spawnScriptThread: SpawnScriptThread): Promise<void> {
  const files = nodeFileTree();
  await runRoutesCli(nodeRuntime(), { files, spawnScriptThread, sessions: nodeSessionsHost(files) });
}
