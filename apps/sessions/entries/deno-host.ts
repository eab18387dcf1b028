/** The session service's host pieces on Deno: the file system, Web Workers, the built web UI. */
import { denoFileTree, denoHostPaths } from "#lib/adapters/deno/files";
import type { FileTree } from "#lib/files";
import { type SessionsHost, uiDirectoryOf } from "../host.ts";
import { createDenoThreadRuntimes } from "../live/deno-threads.ts";

export function denoSessionsHost(files: FileTree = denoFileTree()): SessionsHost {
  return { files, paths: denoHostPaths(), threadRuntimes: createDenoThreadRuntimes, uiDirectory: uiDirectoryOf(new URL("../ui/dist", import.meta.url)) };
}
