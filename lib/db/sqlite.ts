/**
 * SqlStore over an embedded SQLite database reached directly through the `libsql` package (the
 * engine under @libsql/client), for `file:` and `:memory:` databases on Node and Deno. The caller
 * opens the connections (lib/db/open.ts), so this file stays free of runtime imports.
 *
 * Why not @libsql/client here: it prepares every statement again on each call (no statement
 * cache), probes each one by catching an exception, and commits on the calling thread, so an
 * fsync holds the whole server. This store keeps prepared statements, and with a file database it
 * uses two connections:
 * - the writer runs each batch as `BEGIN IMMEDIATE` ... `COMMIT`, the statements synchronously
 *   and the COMMIT through the asynchronous API (`libsql/promise`), so the commit's fsync happens
 *   off the JavaScript thread while the server goes on;
 * - the reader answers `query` and sees only committed data (WAL mode), never a batch half-way.
 * A `:memory:` database exists on one connection only: reads and writes share it, and a batch
 * runs synchronously from BEGIN to COMMIT, so no read can land inside it.
 *
 * Several processes on one file (instances of the identity provider) take turns at the write
 * lock. SQLite's own busy handler sleeps 1, 2, 5, 10 ms and longer between its tries, while a
 * commit holds the lock for a fraction of a millisecond (measured: a waiter got a lock held for
 * 3 ms after 8 to 33 ms); with `lockWait` the writer's busy_timeout is 0 and its BEGIN, which
 * then never waits, is tried again from here instead, at the pace the caller's `pause` sets.
 */
import { isBusyError, type SqlRow, type SqlStatement, type SqlStore, type SqlValue } from "./store.ts";

/** The slice of a `libsql` statement this store uses. */
export interface SqliteStatement {
  run(args: unknown[]): { changes: number };
  all(args: unknown[]): Record<string, unknown>[];
}

/** A `libsql` connection: the synchronous API (`libsql`) or the asynchronous one (`libsql/promise`). */
export interface SqliteConnection {
  prepare(sql: string): SqliteStatement | Promise<SqliteStatement>;
  exec(sql: string): unknown;
  close(): void;
}

export interface SqliteStoreOptions {
  /** Runs the batches (and `execute`). */
  writer: SqliteConnection;
  /** Answers `query`; must be synchronous. Without it the writer reads (and must be synchronous). */
  reader?: SqliteConnection;
  /**
   * Retries a BEGIN that found the write lock held (SQLITE_BUSY) until `timeoutMs` have passed,
   * awaiting `pause(attempt)` between tries; for a writer whose own busy_timeout is 0.
   */
  lockWait?: { timeoutMs: number; pause(attempt: number): Promise<void>; now?: () => number };
}

/** Prepared statements kept per connection (a few dozen distinct texts in practice). */
const CACHE_SIZE = 256;

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === "function";
}

/** A connection's prepared statements by SQL text, oldest evicted first. */
function statementCache(connection: SqliteConnection) {
  const cache = new Map<string, SqliteStatement>();
  const keep = (sql: string, statement: SqliteStatement) => {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(sql, statement);
    return statement;
  };
  return (sql: string): SqliteStatement | Promise<SqliteStatement> => {
    const hit = cache.get(sql);
    if (hit) return hit;
    const prepared = connection.prepare(sql);
    return isPromise(prepared) ? prepared.then((s) => keep(sql, s)) : keep(sql, prepared);
  };
}

function toRow(row: Record<string, unknown>): SqlRow {
  for (const key in row) if (row[key] instanceof ArrayBuffer) row[key] = new Uint8Array(row[key] as ArrayBuffer);
  return row as SqlRow;
}

export function sqliteStore(options: SqliteStoreOptions): SqlStore {
  const { writer } = options;
  const reader = options.reader ?? writer;
  const readStatement = statementCache(reader);
  const writeStatement = statementCache(writer);
  /** Batches run one after the other on the writer. */
  let tail: Promise<unknown> = Promise.resolve();

  async function begin(): Promise<void> {
    const wait = options.lockWait;
    const now = wait?.now ?? (() => performance.now());
    const deadline = wait ? now() + wait.timeoutMs : 0;
    // With lockWait the writer's busy_timeout is 0, so BEGIN never waits in SQLite: it runs as a
    // kept statement on this thread (~7 µs of CPU against ~23 for a trip through the asynchronous
    // API, once per commit) and a held lock comes back at once as SQLITE_BUSY, retried below.
    let beginNow = wait ? writeStatement("BEGIN IMMEDIATE") : undefined;
    if (isPromise(beginNow)) beginNow = await beginNow;
    for (let attempt = 1;; attempt++) {
      try {
        if (beginNow) {
          beginNow.run([]);
          return;
        }
        const begun = writer.exec("BEGIN IMMEDIATE");
        if (isPromise(begun)) await begun;
        return;
      } catch (err) {
        if (!wait || !isBusyError(err) || now() >= deadline) throw err;
        await wait.pause(attempt);
      }
    }
  }

  async function transact(statements: SqlStatement[]): Promise<number[]> {
    let rollback = writeStatement("ROLLBACK");
    if (isPromise(rollback)) rollback = await rollback;
    // From BEGIN on, a synchronous connection never awaits (its statements come back at once),
    // so on a shared `:memory:` connection no read can run inside the transaction. An
    // asynchronous writer has a connection of its own: without lockWait its BEGIN goes off the
    // JavaScript thread, where waiting for another process's write lock (busy_timeout) holds
    // nothing else up, and it may await a first preparation.
    await begin();
    try {
      const changes: number[] = [];
      for (const s of statements) {
        let prepared = writeStatement(s.sql);
        if (isPromise(prepared)) prepared = await prepared;
        changes.push(prepared.run((s.args ?? []) as SqlValue[]).changes);
      }
      // The commit (and its fsync) goes through the asynchronous API when the writer has it.
      const committed = writer.exec("COMMIT");
      if (isPromise(committed)) await committed;
      return changes;
    } catch (err) {
      try {
        rollback.run([]);
      } catch {
        // Already rolled back by SQLite (some errors end the transaction themselves).
      }
      throw err;
    }
  }

  function serialized(statements: SqlStatement[]): Promise<number[]> {
    const run = tail.then(
      () => transact(statements),
      () => transact(statements),
    );
    tail = run.catch(() => {});
    return run;
  }

  return {
    async query<R extends SqlRow>(sql: string, args?: SqlValue[]) {
      const statement = readStatement(sql);
      if (isPromise(statement)) throw new Error("sqliteStore: the reading connection must be synchronous");
      return statement.all(args ?? []).map(toRow) as R[];
    },
    async execute(sql, args) {
      const [changes] = await serialized([{ sql, args }]);
      return { changes: changes! };
    },
    async batch(statements) {
      if (statements.length === 0) return [];
      return serialized(statements);
    },
    async close() {
      await tail;
      if (reader !== writer) reader.close();
      writer.close();
    },
  };
}
