/**
 * Execution rows and their events. The ExecutionRecorder (domain/recorder.ts) decides when to
 * write; this module only knows the statements.
 */
import type { SqlRow, SqlStatement, SqlStore, SqlValue } from "#lib/db";
import type { EventRecord, ExecutionRecord } from "../domain/records.ts";

const COLUMNS = "id, session_id, kind, input, path, args, env, status, started_at, ended_at, result, error, duration_ms, event_count, output_bytes";

const present = (v: unknown): boolean => v !== null && v !== undefined;

function toExecution(r: SqlRow): ExecutionRecord {
  const e: ExecutionRecord = {
    id: String(r.id),
    session_id: String(r.session_id),
    kind: String(r.kind) as ExecutionRecord["kind"],
    args: JSON.parse(String(r.args)) as Record<string, unknown>,
    env: JSON.parse(String(r.env)) as Record<string, unknown>,
    status: String(r.status) as ExecutionRecord["status"],
    started_at: String(r.started_at),
    metrics: { duration_ms: Number(r.duration_ms), events: Number(r.event_count), output_bytes: Number(r.output_bytes) },
  };
  if (present(r.input)) e.input = String(r.input);
  if (present(r.path)) e.path = String(r.path);
  if (present(r.ended_at)) e.ended_at = String(r.ended_at);
  if (present(r.result)) e.result = JSON.parse(String(r.result)) as ExecutionRecord["result"];
  if (present(r.error)) e.error = JSON.parse(String(r.error)) as ExecutionRecord["error"];
  // Key order of the wire record: metrics last, as in docs/sessions.md#records.
  const { metrics, ...rest } = e;
  return { ...rest, metrics };
}

const toEvent = (r: SqlRow): EventRecord => ({
  execution_id: String(r.execution_id),
  seq: Number(r.seq),
  ts: String(r.ts),
  type: String(r.type) as EventRecord["type"],
  payload: JSON.parse(String(r.payload)) as Record<string, unknown>,
});

const jsonOrNull = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/** The columns an execution's end sets, in the order of OUTCOME_COLUMNS. */
const OUTCOME_COLUMNS = ["status", "ended_at", "result", "error", "duration_ms", "event_count", "output_bytes"];
const outcomeValues = (e: ExecutionRecord) => [
  e.status,
  e.ended_at ?? null,
  jsonOrNull(e.result),
  jsonOrNull(e.error),
  e.metrics.duration_ms,
  e.metrics.events,
  e.metrics.output_bytes,
];

const INSERT_COLUMNS = ["id", "session_id", "kind", "input", "path", "args", "env", "started_at", ...OUTCOME_COLUMNS];
const INSERT_EXECUTION = `INSERT INTO executions (${INSERT_COLUMNS.join(", ")}) VALUES (${INSERT_COLUMNS.map(() => "?").join(", ")})`;
const FINISH_EXECUTION = `UPDATE executions SET ${OUTCOME_COLUMNS.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`;

/** The row as it is now: `running` when stored early, or final when the execution is stored at its end. */
export function insertExecutionStatement(e: ExecutionRecord): SqlStatement {
  return {
    sql: INSERT_EXECUTION,
    args: [e.id, e.session_id, e.kind, e.input ?? null, e.path ?? null, JSON.stringify(e.args), JSON.stringify(e.env), e.started_at, ...outcomeValues(e)],
  };
}

/** The final state of a row that was `running`. */
export function finishExecutionStatement(e: ExecutionRecord): SqlStatement {
  return {
    sql: FINISH_EXECUTION,
    args: [...outcomeValues(e), e.id],
  };
}

/** Rows per event INSERT: 5 parameters each, and a Durable Object's SQLite binds at most 100. */
const EVENTS_PER_INSERT = 20;
/** The INSERT for n rows, made once per n. */
const insertEventsSql: string[] = [];
const eventsSql = (
  n: number,
) => (insertEventsSql[n] ??= `INSERT INTO execution_events (execution_id, seq, ts, type, payload) VALUES ${
  Array.from({ length: n }, () => "(?, ?, ?, ?, ?)").join(", ")
}`);

/** Multi-row INSERTs of the events, in order (one statement for up to EVENTS_PER_INSERT). */
export function insertEventsStatements(events: readonly EventRecord[]): SqlStatement[] {
  const statements: SqlStatement[] = [];
  for (let i = 0; i < events.length; i += EVENTS_PER_INSERT) {
    const chunk = events.slice(i, i + EVENTS_PER_INSERT);
    const args: SqlValue[] = [];
    for (const e of chunk) args.push(e.execution_id, e.seq, e.ts, e.type, JSON.stringify(e.payload));
    statements.push({ sql: eventsSql(chunk.length), args });
  }
  return statements;
}

export async function getExecution(store: SqlStore, id: string): Promise<ExecutionRecord | undefined> {
  const [row] = await store.query(`SELECT ${COLUMNS} FROM executions WHERE id = ?`, [id]);
  return row && toExecution(row);
}

/** The session's executions, newest first. */
export async function listExecutions(store: SqlStore, sessionId: string, limit: number): Promise<ExecutionRecord[]> {
  const rows = await store.query(`SELECT ${COLUMNS} FROM executions WHERE session_id = ? ORDER BY rowid DESC LIMIT ?`, [
    sessionId,
    limit,
  ]);
  return rows.map(toExecution);
}

export async function listEvents(store: SqlStore, executionId: string, afterSeq = 0): Promise<EventRecord[]> {
  const rows = await store.query(
    "SELECT execution_id, seq, ts, type, payload FROM execution_events WHERE execution_id = ? AND seq > ? ORDER BY seq",
    [executionId, afterSeq],
  );
  return rows.map(toEvent);
}

/**
 * At start: executions a previous process left `running` end as `error`, each with a closing
 * `system` event after its last recorded one. Returns how many.
 */
export async function failExecutionsOfPreviousRun(store: SqlStore, at: string, reason: string): Promise<number> {
  const rows = await store.query(
    `SELECT ${COLUMNS}, (SELECT COALESCE(MAX(seq), 0) FROM execution_events WHERE execution_id = executions.id) AS last_seq
     FROM executions WHERE status = 'running'`,
  );
  if (rows.length === 0) return 0;
  const statements = rows.flatMap((row) => {
    const seq = Number(row.last_seq) + 1;
    const execution = toExecution(row);
    const event: EventRecord = { execution_id: execution.id, seq, ts: at, type: "system", payload: { message: reason, level: "error" } };
    const finished: ExecutionRecord = {
      ...execution,
      status: "error",
      ended_at: at,
      error: { message: reason },
      metrics: { ...execution.metrics, events: seq },
    };
    return [...insertEventsStatements([event]), finishExecutionStatement(finished)];
  });
  await store.batch(statements);
  return rows.length;
}
