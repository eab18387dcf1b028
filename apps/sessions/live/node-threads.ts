/** The thread pool on Node: worker threads running apps/sessions/entries/node-thread.ts (or `entry`). */
import { nodeThreadSpawner } from "#lib/adapters/node/threads";
import { createThreadRuntimes, type ThreadPoolOptions } from "./thread-pool.ts";
import type { LiveRuntimes } from "./types.ts";

export function createNodeThreadRuntimes(options: ThreadPoolOptions = {}, entry = new URL("../entries/node-thread.ts", import.meta.url)): LiveRuntimes {
  return createThreadRuntimes(nodeThreadSpawner(entry), options);
}
