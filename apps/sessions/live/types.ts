/**
 * The boundary between the REST layer (routes, store, execution records) and the live sandboxes.
 * The REST layer decides what may run and records what happened; a `LiveRuntimes` implementation
 * owns where sandboxes live: in-process (tests), a worker-thread pool (Node, Deno), or one Durable
 * Object per session (workerd).
 */
import { CodedError } from "#lib/errors";
import type { Limits, ReportedLimit } from "./limits.ts";

export type { Limits };

export interface Settings {
  limits: Limits;
  resolver: { roots: string[]; extensions: string[]; allow_absolute_repo_imports: boolean };
  runtime: { esm: boolean; strict: boolean; console: boolean };
}

export type CapabilityKind = "module" | "global" | "fs" | "net" | "env";

export interface CapabilitySpec {
  kind: CapabilityKind;
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

/** Everything a live runtime needs to start, read from the template at session setup. */
export interface SessionSpec {
  sessionId: string;
  /** Absolute path of the session's worktree, as stored on the session row; a root of the
   * worktree FileTree (lib/files/tree.ts: host file system on Node and Deno, R2 on workerd). */
  worktreePath: string;
  settings: Settings;
  capabilities: CapabilitySpec[];
  /** Module names from the catalog, as configured on the template. */
  modules: string[];
  /** Library sources, already read from the library directory, in the order they were added. */
  libraries: { name: string; source: string }[];
  /** Startup files in ascending `order_index` (ties by creation order), already resolved and
   * read from the worktree by the caller (so a bad path fails before a runtime exists). */
  startupFiles: { path: string; order_index: number; source: string }[];
}

/** A run-file request carries the file's source, resolved and read by the caller through the
 * worktree FileTree before anything is stored or run. */
export type ExecutionRequest =
  | { kind: "repl"; input: string }
  | { kind: "run_file"; path: string; source: string; args: Record<string, unknown>; env: Record<string, unknown> };

export type EventType = "input_echo" | "console" | "value" | "exception" | "system" | "stdout" | "stderr";

/** An event as produced; the REST layer adds `execution_id`, `seq` and `ts` when it records it. */
export interface LiveEvent {
  type: EventType;
  payload: Record<string, unknown>;
}

export type ExecutionStatus = "ok" | "error" | "timeout" | "limit_exceeded" | "cancelled";

export interface ExecutionOutcome {
  status: ExecutionStatus;
  result?: { type: string; preview: string; json?: unknown };
  error?: { message: string; stack: string };
  /** Which limit ended it, for `timeout` and `limit_exceeded`. */
  limit?: ReportedLimit;
  metrics: { duration_ms: number; events: number; output_bytes: number };
}

/** Typed failures the REST layer maps to error codes. */
export type LiveErrorCode = "STARTUP_FAILED" | "SESSION_NOT_LIVE" | "SESSION_BUSY" | "RUNTIME_LOST";

export class LiveRuntimeError extends CodedError<LiveErrorCode> {}

/** The refusal of a second execution of a session (see LiveRuntimes.execute). */
export const sessionBusy = (sessionId: string) => new LiveRuntimeError("SESSION_BUSY", `session ${sessionId} is already running an execution`);

export interface LiveRuntimes {
  /**
   * Creates the sandbox, loads libraries, runs startup files in the given order. Rejects with
   * LiveRuntimeError `STARTUP_FAILED` (message names the file and the script's error) and leaves
   * nothing alive on failure.
   */
  open(spec: SessionSpec): Promise<void>;
  /**
   * Runs one execution. `onEvent` is called for every event in order as it is produced (including
   * `input_echo` first), never more than `max_events` times in all. Rejects with
   * `SESSION_NOT_LIVE` for an id that is not live, `SESSION_BUSY` while another execution of the
   * session runs (decided once per implementation, where the session's state is authoritative:
   * the thread pool's main thread, the session's Durable Object, in process the runtimes' map;
   * the REST layer's claim keeps its own calls one at a time),
   * `RUNTIME_LOST` when the runtime died under it (its thread crashed or hung past
   * `wall_ms`; the session is then no longer live). Throws, timeouts and limits are outcomes.
   */
  execute(sessionId: string, request: ExecutionRequest, onEvent: (event: LiveEvent) => void): Promise<ExecutionOutcome>;
  /**
   * Cancels the session's running execution: it ends soon with status `cancelled` (code that
   * spins is interrupted, waits on timers or host calls end at once) and the session stays live.
   * Resolves false when nothing was running there (it may have just ended).
   */
  cancel(sessionId: string): Promise<boolean>;
  /** Discards the runtime; a no-op for an id that is not live. */
  close(sessionId: string): Promise<void>;
  /** Ids of the runtimes alive now. */
  liveIds(): string[];
  /**
   * Where runtimes can outlive the service's own memory (workerd: each lives in a Durable Object
   * of its own, while the service's object may be evicted when idle and start again): of these
   * ids, the ones whose runtime is still alive, now held live again. Absent where runtimes die
   * with the process (Node, Deno threads): a start then means a restart.
   */
  adopt?(sessionIds: string[]): Promise<string[]>;
  /** Frees every runtime (server shutdown). */
  shutdown(): Promise<void>;
}

/** Names of the host-provided native modules a template may add (`require(name)` in the sandbox).
 * A deployment may narrow the catalog; anything else is 422 MODULE_NOT_ALLOWED. */
export const MODULE_CATALOG = ["fs", "path", "http", "env"] as const;
export type ModuleName = (typeof MODULE_CATALOG)[number];

/** What every LiveRuntimes implementation is built from. */
export interface LiveRuntimeOptions {
  /** Where worktrees live (lib/files/tree.ts); the `fs` module reads and writes through it. */
  worktrees: import("#lib/files").FileTree;
  /** Host environment variables that `env` capabilities may expose (nothing else is visible). */
  hostEnv?: Record<string, string | undefined>;
  /** The `http` module's transport (default: global fetch); tests inject one. */
  fetch?: typeof fetch;
  /** The deployment's module catalog (default: all of MODULE_CATALOG). */
  modules?: readonly ModuleName[];
  /**
   * Called when runtimes die outside any call that could report it (a worker thread crashed or
   * was terminated because it hung): the REST layer marks those sessions `crashed`.
   */
  onLost?: (sessionIds: string[], reason: string) => void;
}
