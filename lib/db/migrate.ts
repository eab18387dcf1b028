/**
 * Numbered migrations applied at start. Each migration is a list of statements run in one batch
 * together with its row in the migrations table, so a half-applied migration cannot exist.
 *
 * Several processes may start on one database at once (instances of the identity provider): a
 * migration whose batch fails is looked up again, and if another process applied it meanwhile,
 * that is success.
 */
import type { SqlStore } from "./store.ts";

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

export interface MigrateOptions {
  /** The table that records applied versions (default `schema_migrations`); one per app when
   * apps share a database. */
  table?: string;
}

export async function applyMigrations(store: SqlStore, migrations: readonly Migration[], options: MigrateOptions = {}): Promise<number[]> {
  const table = options.table ?? "schema_migrations";
  if (!/^[a-z_]+$/.test(table)) throw new Error(`invalid migrations table name "${table}"`);
  await store.execute(`CREATE TABLE IF NOT EXISTS ${table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = async () => new Set((await store.query<{ version: number }>(`SELECT version FROM ${table}`)).map((r) => Number(r.version)));
  const already = await applied();
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  const done: number[] = [];
  for (const m of ordered) {
    if (already.has(m.version)) continue;
    try {
      await store.batch([
        ...m.statements.map((sql) => ({ sql })),
        { sql: `INSERT INTO ${table} (version, name, applied_at) VALUES (?, ?, ?)`, args: [m.version, m.name, new Date().toISOString()] },
      ]);
    } catch (err) {
      if ((await applied()).has(m.version)) continue; // another process was first
      throw err;
    }
    done.push(m.version);
  }
  return done;
}
