/**
 * The public REST API as the UI uses it: relative to the page, so the UI works at `/` and under a
 * mount prefix. Every failure is an ApiFailure with the API's `code` and `message` (or a made-up
 * code for a network failure or a body that is not the error shape).
 */
import { CodedError } from "#lib/errors";
import type { ErrorCode } from "../../domain/errors.ts";

/** The service's codes, and the UI's own: no answer, an answer without the error shape, a form
 * field left empty, anything else. */
export type ApiFailureCode = ErrorCode | "NETWORK_ERROR" | `HTTP_${number}` | "REQUIRED" | "ERROR";

export class ApiFailure extends CodedError<ApiFailureCode> {
  constructor(
    readonly status: number,
    code: ApiFailureCode,
    message: string,
  ) {
    super(code, message);
  }
}

/** The directory of the page: `/` or `/sessions/` (a page at `/sessions` counts as that directory). */
export const base = location.pathname.endsWith("/") ? location.pathname : `${location.pathname}/`;
export const apiUrl = (path: string) => `${base}api/v1${path}`;

/** A JSON request; the answer's JSON, or an ApiFailure. */
export function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  return send<T>(method, path, body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** A text body (`PUT /worktree-files`), answered like any other call. */
export function putText(path: string, text: string): Promise<void> {
  return send<void>("PUT", path, { headers: { "content-type": "text/plain; charset=utf-8" }, body: text });
}

async function send<T>(method: string, path: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(apiUrl(path), { ...init, method, credentials: "same-origin" });
  } catch (err) {
    throw new ApiFailure(0, "NETWORK_ERROR", `the service did not answer: ${(err as Error).message}`);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown;
  try {
    data = text === "" ? undefined : JSON.parse(text);
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const e = (data as { error?: { code?: ErrorCode; message?: string } } | undefined)?.error;
    throw new ApiFailure(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? (text.slice(0, 200) || res.statusText));
  }
  return data as T;
}

export interface Template {
  id: string;
  name: string;
  engine: string;
  created_at?: string;
}
export interface Capability {
  id: string;
  kind: string;
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
}
export interface StartupFile {
  id: string;
  path: string;
  order_index: number;
  mode: string;
}
export interface Named {
  name: string;
}
export interface Session {
  id: string;
  template_id: string;
  workspace_id: string;
  base_commit_oid: string;
  worktree_path: string;
  status: string;
  created_at: string;
  closed_at?: string;
  last_error?: string;
}
export interface Value {
  type: string;
  preview: string;
  json?: unknown;
}
export interface Execution {
  id: string;
  session_id: string;
  kind: string;
  input?: string;
  path?: string;
  status: string;
  started_at: string;
  ended_at?: string;
  result?: Value;
  error?: { message: string; stack?: string; limit?: string };
  metrics?: { duration_ms: number; events: number; output_bytes: number };
  events?: ExecEvent[];
}
export interface ExecEvent {
  execution_id?: string;
  seq: number;
  ts?: string;
  type: string;
  payload: Record<string, unknown>;
}
export interface RuntimeMemory {
  rss_bytes?: number;
  heap_used_bytes?: number;
}
export interface RuntimeSummary {
  active_sessions: number;
  active_session_ids: string[];
}

/**
 * Follows an execution's events over Server-Sent Events until its `end` message (then closes, so
 * EventSource does not reconnect). Returns a function that stops following.
 */
export function followEvents(executionId: string, onEvent: (e: ExecEvent) => void, onEnd: (final: Execution) => void): () => void {
  const source = new EventSource(apiUrl(`/executions/${encodeURIComponent(executionId)}/events/stream`));
  source.onmessage = (m) => onEvent(JSON.parse(m.data) as ExecEvent);
  source.addEventListener("end", (m) => {
    source.close();
    onEnd(JSON.parse((m as MessageEvent).data) as Execution);
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) return;
  };
  return () => source.close();
}
