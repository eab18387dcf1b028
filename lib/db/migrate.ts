/**
 * Numbered migrations applied at start. Each migration is a list of statements run in one batch
 * together with its row in `schema_migrations`, so a half-applied migration cannot exist.
 */
import type { SqlStore } from "./store.ts";

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

export async function applyMigrations(store: SqlStore, migrations: readonly Migration[]): Promise<number[]> {
  await store.execute(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  const rows = await store.query<{ version: number }>("SELECT version FROM schema_migrations");
  const applied = new Set(rows.map((r) => Number(r.version)));
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  const done: number[] = [];
  for (const m of ordered) {
    if (applied.has(m.version)) continue;
    await store.batch([
      ...m.statements.map((sql) => ({ sql })),
      {
        sql: "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
        args: [m.version, m.name, new Date().toISOString()],
      },
    ]);
    done.push(m.version);
  }
  return done;
}
