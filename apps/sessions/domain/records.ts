/**
 * The records the API returns (docs/sessions.md#records): snake_case fields, timestamps as
 * RFC 3339 UTC strings with milliseconds, optional fields absent rather than null.
 */
import type { CapabilityKind, EventType, Settings } from "../live/types.ts";

export const ENGINES = ["jsengine"] as const;
export const CAPABILITY_KINDS = ["module", "global", "fs", "net", "env"] as const satisfies readonly CapabilityKind[];
export const SESSION_STATUSES = ["starting", "ready", "crashed", "closed"] as const;
export const EXECUTION_STATUSES = ["running", "ok", "error", "timeout", "limit_exceeded", "cancelled"] as const;
export const EXECUTION_KINDS = ["repl", "run_file"] as const;
export const EVENT_TYPES = ["input_echo", "console", "value", "exception", "system", "stdout", "stderr"] as const satisfies readonly EventType[];

export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export type ExecutionKind = (typeof EXECUTION_KINDS)[number];

export interface TemplateRecord {
  id: string;
  name: string;
  engine: string;
  created_at: string;
  updated_at: string;
}

export interface CapabilityRecord {
  id: string;
  template_id: string;
  kind: CapabilityKind;
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

export interface StartupFileRecord {
  id: string;
  template_id: string;
  path: string;
  order_index: number;
  mode: string;
}

/** A module or library configured on a template; `name` is its key (and its DELETE path). */
export interface TemplateEntryRecord {
  template_id: string;
  name: string;
}

export interface TemplateDetail extends TemplateRecord {
  settings: Settings;
  capabilities: CapabilityRecord[];
  startup_files: StartupFileRecord[];
  modules: TemplateEntryRecord[];
  libraries: TemplateEntryRecord[];
}

export interface SessionRecord {
  id: string;
  template_id: string;
  workspace_id: string;
  base_commit_oid: string;
  worktree_path: string;
  status: SessionStatus;
  created_at: string;
  closed_at?: string;
  last_error?: string;
}

export interface ExecutionMetrics {
  duration_ms: number;
  events: number;
  output_bytes: number;
}

/** `error` is the thrown script error (`{message, stack}`), or for `timeout` and
 * `limit_exceeded` the limit that ended the run (`{message, limit}`). */
export interface ExecutionError {
  message: string;
  stack?: string;
  limit?: string;
}

export interface ExecutionRecord {
  id: string;
  session_id: string;
  kind: ExecutionKind;
  input?: string;
  path?: string;
  args: Record<string, unknown>;
  env: Record<string, unknown>;
  status: ExecutionStatus;
  started_at: string;
  ended_at?: string;
  result?: { type: string; preview: string; json?: unknown };
  error?: ExecutionError;
  metrics: ExecutionMetrics;
}

export interface EventRecord {
  execution_id: string;
  seq: number;
  ts: string;
  type: EventType;
  payload: Record<string, unknown>;
}

/** Milliseconds since the epoch as the API's timestamp format. */
export const timestamp = (ms: number): string => new Date(ms).toISOString();

/** The clock the domain reads; tests pass their own. */
export type Clock = () => number;
