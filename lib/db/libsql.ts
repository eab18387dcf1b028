/**
 * SqlStore over a libSQL client. The caller creates the client (`@libsql/client` on Node and Deno,
 * `@libsql/client/web` on workerd), so this file stays free of runtime imports.
 */
import type { Client, InStatement } from "@libsql/client";
import type { SqlRow, SqlStore, SqlValue } from "./store.ts";

function toRow(columns: string[], row: Record<string, unknown> | unknown[]): SqlRow {
  const out: SqlRow = {};
  columns.forEach((name, i) => {
    const value = (row as unknown[])[i];
    out[name] = value instanceof ArrayBuffer ? new Uint8Array(value) : (value as SqlValue);
  });
  return out;
}

export function libsqlStore(client: Client): SqlStore {
  const stmt = (sql: string, args: SqlValue[] = []): InStatement => ({ sql, args: args as never });
  return {
    async query<R extends SqlRow>(sql: string, args?: SqlValue[]) {
      const rs = await client.execute(stmt(sql, args));
      return rs.rows.map((r) => toRow(rs.columns, r as never)) as R[];
    },
    async execute(sql, args) {
      const rs = await client.execute(stmt(sql, args));
      return { changes: rs.rowsAffected };
    },
    async batch(statements) {
      if (statements.length === 0) return [];
      const results = await client.batch(statements.map((s) => stmt(s.sql, s.args)), "write");
      return results.map((r) => r.rowsAffected);
    },
    async close() {
      client.close();
    },
  };
}

/** The URL forms the CLI accepts: `file:`, `:memory:`, `libsql://`, `http(s)://`, `ws(s)://`. */
export function isLibsqlUrl(url: string): boolean {
  return url === ":memory:" || url.startsWith("file:") || isRemoteLibsqlUrl(url);
}

/** A libSQL server (Turso) rather than an embedded database. */
export function isRemoteLibsqlUrl(url: string): boolean {
  return /^(libsql|https?|wss?):\/\//.test(url);
}
