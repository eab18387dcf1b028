/**
 * IdpStateStore on the project's SQL store (lib/db): one table of records, so several instances
 * on one database (a libSQL file, a Turso database) act as one provider, and a Durable Object's
 * SQLite keeps the state of the provider on workerd.
 *
 * Single use is decided by the database, never by a read followed by a write: `take` deletes the
 * record it read only if it is still there unchanged (of two instances, one sees a change count
 * of 1), `add` inserts only over a missing or expired record, `swap` updates only the value it
 * read. Writes resolve once committed (on a file, after the commit's fsync: durable before the
 * response that depends on them).
 */
import { applyMigrations, isBusyError, type Migration, type SqlStore, type SqlValue } from "#lib/db";
import type { IdpStateStore, RecordOptions, StateKind } from "./store.ts";

/**
 * Version 1 is the table the Durable Object store has kept since before these migrations, so an
 * object's existing storage needs only version 2 (`IF NOT EXISTS` makes version 1 a no-op there).
 */
const IDP_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "idp_state",
    statements: [
      `CREATE TABLE IF NOT EXISTS idp_state (
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        prune_at REAL,
        PRIMARY KEY (kind, key)
      )`,
    ],
  },
  {
    version: 2,
    name: "idp_state groups, insertion order and prune index",
    statements: [
      "ALTER TABLE idp_state ADD COLUMN grp TEXT",
      // Within a kind, in rowid order: the oldest records first (entries, trimOldest).
      "CREATE INDEX idp_state_kind ON idp_state (kind)",
      "CREATE INDEX idp_state_prune ON idp_state (prune_at) WHERE prune_at IS NOT NULL",
      "CREATE INDEX idp_state_group ON idp_state (grp) WHERE grp IS NOT NULL",
    ],
  },
];

/** Its own migrations table, so the provider can share a database with the session service. */
export const IDP_MIGRATIONS_TABLE = "idp_schema_migrations";

/** SQLite has no Infinity: "kept forever" is NULL. */
const pruneAtOf = (options: RecordOptions | undefined): number | null =>
  options?.pruneAt !== undefined && Number.isFinite(options.pruneAt) ? options.pruneAt : null;

const UPSERT = `INSERT INTO idp_state (kind, key, value, prune_at, grp) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, prune_at = excluded.prune_at, grp = excluded.grp`;

interface SqlStateStoreOptions {
  /** Other instances use the same database (see IdpStateStore.shared). */
  shared: boolean;
}

/** Applies the migrations and returns the store. */
export async function sqlStateStore(sql: SqlStore, options: SqlStateStoreOptions): Promise<IdpStateStore> {
  await applyMigrations(sql, IDP_MIGRATIONS, { table: IDP_MIGRATIONS_TABLE });

  const valueOf = async (kind: StateKind, key: string): Promise<string | undefined> => {
    const rows = await sql.query<{ value: string }>("SELECT value FROM idp_state WHERE kind = ? AND key = ?", [kind, key]);
    return rows[0]?.value;
  };
  /** The value columns of a record: value, prune_at, grp. */
  const columns = (value: unknown, options?: RecordOptions): SqlValue[] => [JSON.stringify(value), pruneAtOf(options), options?.group ?? null];
  const row = (kind: StateKind, key: string, value: unknown, options?: RecordOptions): SqlValue[] => [kind, key, ...columns(value, options)];
  const kindList = (kinds: readonly StateKind[]) => kinds.map(() => "?").join(", ");

  return {
    shared: options.shared,
    async get<T>(kind: StateKind, key: string) {
      const text = await valueOf(kind, key);
      return text === undefined ? undefined : (JSON.parse(text) as T);
    },
    async set(kind, key, value, options) {
      await sql.execute(UPSERT, row(kind, key, value, options));
    },
    async add(kind, key, value, now, options) {
      const { changes } = await sql.execute(`${UPSERT} WHERE idp_state.prune_at IS NOT NULL AND idp_state.prune_at <= ?`, [
        ...row(kind, key, value, options),
        now,
      ]);
      return changes > 0;
    },
    async take<T>(kind: StateKind, key: string, read?: T) {
      const text = read === undefined ? await valueOf(kind, key) : JSON.stringify(read);
      if (text === undefined) return undefined;
      const { changes } = await sql.execute("DELETE FROM idp_state WHERE kind = ? AND key = ? AND value = ?", [kind, key, text]);
      return changes > 0 ? (JSON.parse(text) as T) : undefined;
    },
    async swap(kind, key, expected, next, options) {
      const { changes } = await sql.execute("UPDATE idp_state SET value = ?, prune_at = ?, grp = ? WHERE kind = ? AND key = ? AND value = ?", [
        ...columns(next, options),
        kind,
        key,
        JSON.stringify(expected),
      ]);
      return changes > 0;
    },
    async delete(kind, key) {
      await sql.execute("DELETE FROM idp_state WHERE kind = ? AND key = ?", [kind, key]);
    },
    async deleteGroup(kinds, group) {
      if (kinds.length === 0) return;
      await sql.execute(`DELETE FROM idp_state WHERE grp = ? AND kind IN (${kindList(kinds)})`, [group, ...kinds]);
    },
    async entries<T>(kind: StateKind) {
      const rows = await sql.query<{ key: string; value: string }>("SELECT key, value FROM idp_state WHERE kind = ? ORDER BY rowid", [kind]);
      return rows.map((r) => [r.key, JSON.parse(r.value) as T] as [string, T]);
    },
    async groupEntries<T>(kind: StateKind, group: string) {
      const rows = await sql.query<{ key: string; value: string }>("SELECT key, value FROM idp_state WHERE grp = ? AND kind = ? ORDER BY rowid", [group, kind]);
      return rows.map((r) => [r.key, JSON.parse(r.value) as T] as [string, T]);
    },
    async clear(kinds) {
      if (kinds.length === 0) return;
      await sql.execute(`DELETE FROM idp_state WHERE kind IN (${kindList(kinds)})`, [...kinds]);
    },
    async prune(now, limits = {}) {
      const trims = Object.entries(limits) as [StateKind, number][];
      const changes = await sql.batch([
        { sql: "DELETE FROM idp_state WHERE prune_at IS NOT NULL AND prune_at <= ?", args: [now] },
        // The newest `max` of a kind stay: everything up to the (max+1)-th newest goes.
        ...trims.map(([kind, max]) => ({
          sql: "DELETE FROM idp_state WHERE kind = ? AND rowid <= (SELECT rowid FROM idp_state WHERE kind = ? ORDER BY rowid DESC LIMIT 1 OFFSET ?)",
          args: [kind, kind, max],
        })),
      ]);
      return Object.fromEntries(trims.map(([kind], i) => [kind, changes[i + 1] ?? 0]));
    },
    close: () => sql.close(),
  };
}

/**
 * Opens the database and applies the migrations, trying again for a few seconds while another
 * instance starting on the same new database holds it (a fresh file changing to WAL mode can
 * answer "database is locked" without waiting).
 */
export async function openStateStore(open: () => Promise<SqlStore>, options: SqlStateStoreOptions): Promise<IdpStateStore> {
  for (let attempt = 1;; attempt++) {
    let sql: SqlStore | undefined;
    try {
      sql = await open();
      return await sqlStateStore(sql, options);
    } catch (err) {
      await sql?.close().catch(() => {});
      if (attempt >= 20 || !isBusyError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
    }
  }
}
