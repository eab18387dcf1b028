/**
 * The boundary between the REST layer (routes, store, execution records) and the live sandboxes.
 * The REST layer decides what may run and records what happened; a `LiveRuntimes` implementation
 * owns where sandboxes live: in-process (tests), a worker-thread pool (Node, Deno), or one Durable
 * Object per session (workerd).
 */

export interface Limits {
  cpu_ms: number;
  wall_ms: number;
  mem_mb: number;
  max_events: number;
  max_output_kb: number;
}

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
  /** Absolute path (host file system) or key (worktree store) of the session's worktree. */
  worktreePath: string;
  settings: Settings;
  capabilities: CapabilitySpec[];
  /** Module names from the catalog, as configured on the template. */
  modules: string[];
  /** Library sources, already read from the library directory, in the order they were added. */
  libraries: { name: string; source: string }[];
  /** Startup files in ascending `order_index` (ties by creation order). */
  startupFiles: { path: string; order_index: number }[];
}

export type ExecutionRequest =
  | { kind: "repl"; input: string }
  | { kind: "run_file"; path: string; args: Record<string, unknown>; env: Record<string, unknown> };

export type EventType = "input_echo" | "console" | "value" | "exception" | "system" | "stdout" | "stderr";

/** An event as produced; the REST layer adds `execution_id`, `seq` and `ts` when it records it. */
export interface LiveEvent {
  type: EventType;
  payload: Record<string, unknown>;
}

export type ExecutionStatus = "ok" | "error" | "timeout" | "limit_exceeded";

export interface ExecutionOutcome {
  status: ExecutionStatus;
  result?: { type: string; preview: string; json?: unknown };
  error?: { message: string; stack: string };
  /** Which limit ended it, for `timeout` and `limit_exceeded`. */
  limit?: "cpu_ms" | "wall_ms" | "max_events" | "max_output_kb" | "memory";
  metrics: { duration_ms: number; events: number; output_bytes: number };
}

/** Typed failures the REST layer maps to error codes. */
export type LiveErrorCode = "INVALID_PATH" | "FILE_NOT_FOUND" | "STARTUP_FAILED" | "SESSION_NOT_LIVE" | "SESSION_BUSY";

export class LiveRuntimeError extends Error {
  readonly code: LiveErrorCode;
  constructor(code: LiveErrorCode, message: string) {
    super(message);
    this.name = "LiveRuntimeError";
    this.code = code;
  }
}

export interface LiveRuntimes {
  /**
   * Creates the sandbox, loads libraries, runs startup files. Rejects with LiveRuntimeError
   * (`INVALID_PATH`, `FILE_NOT_FOUND`, `STARTUP_FAILED` with the script's message) and leaves
   * nothing alive on failure.
   */
  open(spec: SessionSpec): Promise<void>;
  /**
   * Runs one execution. `onEvent` is called for every event in order as it is produced (including
   * `input_echo` first), never more than `max_events` times. Rejects with `INVALID_PATH` /
   * `FILE_NOT_FOUND` for run-file before any script runs, `SESSION_NOT_LIVE` for an unknown id.
   */
  execute(sessionId: string, request: ExecutionRequest, onEvent: (event: LiveEvent) => void): Promise<ExecutionOutcome>;
  /** Discards the runtime; a no-op for an id that is not live. */
  close(sessionId: string): Promise<void>;
  /** Ids of the runtimes alive now. */
  liveIds(): string[];
  /** Frees every runtime (server shutdown). */
  shutdown(): Promise<void>;
}
