/**
 * What the session service's domain functions work with: the stores, the live runtimes, the
 * clock, and the in-memory state (live sessions, busy sessions, executions in flight). One object
 * per app, built by `createSessionService`; nothing here is global.
 */
import type { ProcessMemory } from "#lib/runtime";
import type { SqlStore } from "#lib/db";
import type { FileTree, Roots } from "#lib/files";
import type { Logger } from "#lib/log";
import type { LiveRuntimes, ModuleName } from "../live/types.ts";
import type { LibraryDirectory } from "./libraries.ts";
import type { Clock, SessionRecord } from "./records.ts";
import type { ExecutionRecorder, RecorderOptions } from "./recorder.ts";

export interface ServiceContext {
  /** The process's memory, where the runtime tells it (Node, Deno). */
  memory?: () => ProcessMemory;
  store: SqlStore;
  live: LiveRuntimes;
  /** Where session worktrees live: the host file system, or R2 on workerd. */
  worktrees: FileTree;
  /** Worktrees are uploaded through the API (workerd): a missing one says how. */
  worktreeUploads: boolean;
  /** The host directories a `worktree_path` must be inside (Node, Deno); none on workerd, where
   * worktrees are prefixes of a bucket that holds nothing else. */
  worktreeRoots?: Roots;
  libraries: LibraryDirectory;
  /** The deployment's module catalog (a subset of MODULE_CATALOG). */
  modules: readonly ModuleName[];
  clock: Clock;
  newId: () => string;
  logger: Logger;
  /** Sessions with an execution or a restart in flight (`claimSession` in sessions.ts, the only
   * place that reads or writes it). */
  busy: Set<string>;
  /** The records of the sessions this process holds live (`ready`), by id. This process is the
   * only writer of those rows, so reading a live session needs no query; a session leaves the
   * map before its row stops being `ready` (close, crash). */
  liveSessions: Map<string, SessionRecord>;
  /** Recorders of the executions in flight, by execution id (the SSE stream follows them). */
  recorders: Map<string, ExecutionRecorder>;
  recorderOptions?: RecorderOptions;
  /** Set when the service shuts down: runtimes closing under executions is expected then. */
  stopping: boolean;
}
