// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * SqlStore over a Durable Object's SQLite storage (`ctx.storage.sql`), used on workerd when no
 * libSQL URL is configured. The storage API is synchronous; the interface stays async so callers
 * do not care which store they hold.
 */
import type { SqlRow, SqlStore, SqlValue } from "./store.ts";

/** The slice of `DurableObjectStorage` this store needs (kept structural so no workers types leak). */
interface DurableSqlStorage {
  sql: {
    exec(query: string, ...bindings: unknown[]): { toArray(): Record<string, unknown>[]; rowsWritten: number };
  };
  transactionSync<T>(fn: () => T): T;
}

function bind(args: SqlValue[] = []): unknown[] {
  // DO SQLite takes ArrayBuffer for blobs and numbers for integers.
  return args.map((a) => (a instanceof Uint8Array ? a.slice().buffer : typeof a === "bigint" ? Number(a) : a));
}

function toRow(row: Record<string, unknown>): SqlRow {
  const out: SqlRow = {};
  for (const [k, v] of Object.entries(row)) out[k] = v instanceof ArrayBuffer ? new Uint8Array(v) : (v as SqlValue);
  return out;
}

export function durableObjectStore(storage: DurableSqlStorage): SqlStore {
  return {
    async query<R extends SqlRow>(sql: string, args?: SqlValue[]) {
      return storage.sql.exec(sql, ...bind(args)).toArray().map(toRow) as R[];
    },
    async execute(sql, args) {
      const cursor = storage.sql.exec(sql, ...bind(args));
      cursor.toArray();
      return { changes: cursor.rowsWritten };
    },
    async batch(statements) {
      return storage.transactionSync(() =>
        statements.map((s) => {
          const cursor = storage.sql.exec(s.sql, ...bind(s.args));
          cursor.toArray();
          return cursor.rowsWritten;
        }),
      );
    },
    async close() {},
  };
}
