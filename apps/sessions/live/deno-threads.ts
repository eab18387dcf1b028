/** The thread pool on Deno: Web Workers running apps/sessions/entries/deno-thread.ts. */
import { denoThreadSpawner } from "#lib/adapters/deno/threads";
import { createThreadRuntimes, type ThreadPoolOptions } from "./thread-pool.ts";
import type { LiveRuntimes } from "./types.ts";

export function createDenoThreadRuntimes(options: ThreadPoolOptions = {}): LiveRuntimes {
  return createThreadRuntimes(denoThreadSpawner(new URL("../entries/deno-thread.ts", import.meta.url)), options);
}
