/** Entry of each session thread on Node (spawned by apps/sessions/live/node-threads.ts). */
import { nodeFileTree } from "#lib/adapters/node/files";
import { nodeThreadEndpoint } from "#lib/adapters/node/thread-endpoint";
import { serveSessionThread } from "../live/thread-host.ts";

serveSessionThread(nodeThreadEndpoint(), { worktrees: nodeFileTree() });
