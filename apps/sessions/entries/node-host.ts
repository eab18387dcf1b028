/** The session service's host pieces on Node: the file system, worker threads, the built web UI. */
import { nodeFileTree, nodeHostPaths } from "#lib/adapters/node/files";
import type { FileTree } from "#lib/files";
import { type SessionsHost, uiDirectoryOf } from "../host.ts";
import { createNodeThreadRuntimes } from "../live/node-threads.ts";

export interface NodeSessionsPlaces {
  /** The session thread's entry (default apps/sessions/entries/node-thread.ts; the npm package's is built). */
  threadEntry?: URL;
  /** The built web UI (default apps/sessions/ui/dist). */
  uiDirectory?: URL;
}

export function nodeSessionsHost(files: FileTree = nodeFileTree(), places: NodeSessionsPlaces = {}): SessionsHost {
  return {
    files,
    paths: nodeHostPaths(),
    threadRuntimes: (options) => createNodeThreadRuntimes(options, places.threadEntry),
    uiDirectory: uiDirectoryOf(places.uiDirectory ?? new URL("../ui/dist", import.meta.url)),
  };
}
