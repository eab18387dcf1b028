/** The session service's host pieces on Node: the file system, worker threads, the built web UI. */
import { nodeFileTree } from "#lib/adapters/node-files";
import { nodeThreadSpawner } from "#lib/adapters/node-threads";
import type { FileTree } from "#lib/files";
import { type SessionsHost, uiDirectoryOf } from "./cli.ts";
import { createThreadRuntimes } from "./live/thread-pool.ts";

export interface NodeSessionsPlaces {
  /** The session thread's entry (default apps/sessions/node-thread.ts; the npm package's is built). */
  threadEntry?: URL;
  /** The built web UI (default apps/sessions/ui/dist). */
  uiDirectory?: URL;
}

export function nodeSessionsHost(files: FileTree = nodeFileTree(), places: NodeSessionsPlaces = {}): SessionsHost {
  const entry = places.threadEntry ?? new URL("./node-thread.ts", import.meta.url);
  return {
    files,
    threadRuntimes: (options) => createThreadRuntimes(nodeThreadSpawner(entry), options),
    uiDirectory: uiDirectoryOf(places.uiDirectory ?? new URL("./ui/dist", import.meta.url)),
  };
}
