/**
 * Session rows. Status changes are conditional updates (`WHERE status IN (...)`), so a close that
 * races a startup, or a crash report that comes after a close, never moves a row backwards.
 */
import type { SqlRow, SqlStore } from "#lib/db";
import type { SessionRecord, SessionStatus } from "../domain/records.ts";

const COLUMNS = "id, template_id, workspace_id, base_commit_oid, worktree_path, status, created_at, closed_at, last_error";

function toSession(r: SqlRow): SessionRecord {
  const session: SessionRecord = {
    id: String(r.id),
    template_id: String(r.template_id),
    workspace_id: String(r.workspace_id),
    base_commit_oid: String(r.base_commit_oid),
    worktree_path: String(r.worktree_path),
    status: String(r.status) as SessionStatus,
    created_at: String(r.created_at),
  };
  if (r.closed_at !== null && r.closed_at !== undefined) session.closed_at = String(r.closed_at);
  if (r.last_error !== null && r.last_error !== undefined) session.last_error = String(r.last_error);
  return session;
}

export async function insertSession(store: SqlStore, s: SessionRecord): Promise<void> {
  await store.execute(`INSERT INTO sessions (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)`, [
    s.id,
    s.template_id,
    s.workspace_id,
    s.base_commit_oid,
    s.worktree_path,
    s.status,
    s.created_at,
  ]);
}

export async function getSession(store: SqlStore, id: string): Promise<SessionRecord | undefined> {
  const [row] = await store.query(`SELECT ${COLUMNS} FROM sessions WHERE id = ?`, [id]);
  return row && toSession(row);
}

export async function listSessions(store: SqlStore, status?: SessionStatus): Promise<SessionRecord[]> {
  const rows = status
    ? await store.query(`SELECT ${COLUMNS} FROM sessions WHERE status = ? ORDER BY rowid`, [status])
    : await store.query(`SELECT ${COLUMNS} FROM sessions ORDER BY rowid`);
  return rows.map(toSession);
}

/** `starting` → `ready`; false when the row is no longer starting (closed meanwhile). */
export async function markReady(store: SqlStore, id: string): Promise<boolean> {
  const { changes } = await store.execute("UPDATE sessions SET status = 'ready' WHERE id = ? AND status = 'starting'", [id]);
  return changes > 0;
}

/** `starting` or `ready` → `crashed` with the reason. */
export async function markCrashed(store: SqlStore, ids: string[], lastError: string): Promise<void> {
  await store.batch(
    ids.map((id) => ({
      sql: "UPDATE sessions SET status = 'crashed', last_error = ? WHERE id = ? AND status IN ('starting', 'ready')",
      args: [lastError, id],
    })),
  );
}

/** `starting` or `ready` → `closed` at `at`; false when it was neither. */
export async function markClosed(store: SqlStore, id: string, at: string): Promise<boolean> {
  const { changes } = await store.execute(
    "UPDATE sessions SET status = 'closed', closed_at = ? WHERE id = ? AND status IN ('starting', 'ready')",
    [at, id],
  );
  return changes > 0;
}

/** At start: every session a previous process had alive is closed, saying why. Returns how many. */
export async function closeSessionsOfPreviousRun(store: SqlStore, at: string, reason: string, keep: readonly string[] = []): Promise<number> {
  const { changes } = await store.execute(
    `UPDATE sessions SET status = 'closed', closed_at = ?, last_error = ? WHERE status IN ('starting', 'ready')${
      keep.length ? ` AND id NOT IN (${keep.map(() => "?").join(", ")})` : ""
    }`,
    [at, reason, ...keep],
  );
  return changes;
}
