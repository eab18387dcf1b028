/**
 * The SQL store the apps write through: positional `?` parameters, rows as plain objects, and an
 * atomic batch. Implemented over embedded SQLite (`sqlite.ts`), the libSQL client (`libsql.ts`) and
 * a Durable Object's SQLite (`durable.ts`), and wrapped by group commit (`group-commit.ts`);
 * domain code only ever sees this interface.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;
export type SqlRow = Record<string, SqlValue>;

export interface SqlStatement {
  sql: string;
  args?: SqlValue[];
}

export interface SqlStore {
  /** Runs one statement and returns its rows (empty for statements without results). */
  query<R extends SqlRow = SqlRow>(sql: string, args?: SqlValue[]): Promise<R[]>;
  /** Runs one writing statement (atomically, like a batch of one) and returns how many rows it
   * changed. */
  execute(sql: string, args?: SqlValue[]): Promise<{ changes: number }>;
  /** Runs statements atomically: all of them or none. Returns each statement's change count. */
  batch(statements: SqlStatement[]): Promise<number[]>;
  close(): Promise<void>;
}

/** True when the store reported a UNIQUE (or PRIMARY KEY) constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  const text = err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? "")}` : String(err);
  return /UNIQUE constraint failed|SQLITE_CONSTRAINT_UNIQUE|SQLITE_CONSTRAINT_PRIMARYKEY/i.test(text);
}

/** True when the database answered that another connection holds the lock it needs (SQLITE_BUSY). */
export function isBusyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || /database is locked|SQLITE_BUSY/i.test(String((err as Error)?.message ?? err));
}
