/**
 * IdpStateStore for the Durable Object: the in-memory store as a cache, written through to the
 * object's SQLite storage (`ctx.storage.sql`, synchronous), and reloaded from it when the object
 * starts again after an eviction or restart. So codes, sessions, tokens, grants, the replay cache,
 * runtime scenarios, settings and signing keys survive the isolate.
 */
import type { DurableSqlStorage } from "../../../lib/db/durable.ts";
import { MemoryStateStore } from "./memory.ts";
import { STATE_KINDS, type StateKind } from "./store.ts";

const SCHEMA = `CREATE TABLE IF NOT EXISTS idp_state (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  prune_at REAL,
  PRIMARY KEY (kind, key)
)`;

/** SQLite has no Infinity; "kept forever" is stored as NULL. */
const toSql = (pruneAt: number) => (Number.isFinite(pruneAt) ? pruneAt : null);

export function durableStateStore(storage: DurableSqlStorage): MemoryStateStore {
  const exec = (sql: string, ...args: unknown[]) => storage.sql.exec(sql, ...args).toArray();
  exec(SCHEMA);
  const store = new MemoryStateStore({
    set: (kind, key, value, pruneAt) =>
      void exec("INSERT OR REPLACE INTO idp_state (kind, key, value, prune_at) VALUES (?, ?, ?, ?)", kind, key, JSON.stringify(value), toSql(pruneAt)),
    delete: (kind, key) => void exec("DELETE FROM idp_state WHERE kind = ? AND key = ?", kind, key),
    clear: (kinds) => {
      for (const kind of kinds) exec("DELETE FROM idp_state WHERE kind = ?", kind);
    },
    prune: (now) => void exec("DELETE FROM idp_state WHERE prune_at IS NOT NULL AND prune_at <= ?", now),
  });
  const known = new Set<string>(STATE_KINDS);
  for (const row of exec("SELECT kind, key, value, prune_at FROM idp_state ORDER BY rowid")) {
    if (!known.has(row.kind as string)) continue;
    store.restore(row.kind as StateKind, row.key as string, JSON.parse(row.value as string), (row.prune_at as number | null) ?? Infinity);
  }
  return store;
}
