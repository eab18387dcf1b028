/**
 * Opens the SqlStore a Node or Deno command line asks for: an embedded `file:` database (its
 * folder created first), `:memory:`, or a remote libSQL server (`libsql://`, `https://`) with an
 * optional auth token. workerd uses `@libsql/client/web` or a Durable Object instead.
 *
 * Embedded databases go through the `libsql` package directly (sqlite.ts: prepared statements
 * kept, commits off the JavaScript thread); remote ones through @libsql/client. Writes go through
 * group commit (group-commit.ts): what arrives in one turn of the event loop, or while the
 * previous group commits, is one transaction.
 *
 * A file database runs in WAL mode with `synchronous = FULL`: each commit appends to the
 * write-ahead log and fsyncs it before it returns (one fsync per commit instead of the rollback
 * journal's several), so a commit survives a crash of the process and a power loss alike.
 * (`synchronous = NORMAL` would skip that fsync and could lose the last commits on power loss,
 * after their responses went out.)
 */
import type { HostRuntime } from "#lib/runtime";
import { groupCommit } from "./group-commit.ts";
import { isLibsqlUrl, isRemoteLibsqlUrl, libsqlStore } from "./libsql.ts";
import { type SqliteConnection, sqliteStore } from "./sqlite.ts";
import { isBusyError, type SqlStore } from "./store.ts";

/** After the I/O callbacks of this loop iteration: the writes they made go in one group. */
export const afterThisTurn = (flush: () => void) => void setImmediate(flush);

/** `runtime` creates a file database's folder; without it (an edge entry) the folder must exist. */
export async function openSqlStore(runtime: Pick<HostRuntime, "ensureDir" | "resolvePath"> | undefined, url: string, authToken?: string): Promise<SqlStore> {
  if (!isLibsqlUrl(url)) throw new Error(`unsupported database URL "${url}": use file:, :memory:, libsql:// or https://`);
  // Loaded on first use: a process without a database (a route host without --db) never pays
  // for the native module (~20 ms of its start, with the C library detection it runs).
  const { default: Database } = await import("libsql");
  if (url === ":memory:") return groupCommit(sqliteStore({ writer: new Database(":memory:") as SqliteConnection }), { schedule: afterThisTurn });
  if (isRemoteLibsqlUrl(url)) {
    // Loaded only for a server: its web-socket and HTTP stack is ~70 ms of every start otherwise.
    const { createClient } = await import("@libsql/client");
    return groupCommit(libsqlStore(createClient({ url, authToken })), { schedule: afterThisTurn });
  }

  let path = decodeURIComponent(url.slice("file:".length).split("?")[0]!);
  if (path.startsWith("//")) path = path.slice(path.indexOf("/", 2)); // file:///abs, file://localhost/abs
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
  if (dir && runtime) await runtime.ensureDir(runtime.resolvePath(dir));
  const { default: AsyncDatabase } = await import("libsql/promise");
  const writer = new AsyncDatabase(path, {});
  // Other processes may write the same file (instances of the identity provider): a transaction
  // waits up to 5 s for their write lock instead of failing with SQLITE_BUSY at once; sqlite.ts
  // retries its BEGIN (lockWait) at a finer pace than SQLite's busy handler, which the writer
  // keeps while it switches the file to WAL.
  await writer.exec("PRAGMA busy_timeout = 5000");
  await switchToWal(writer);
  await writer.exec("PRAGMA synchronous = FULL");
  await writer.exec("PRAGMA busy_timeout = 0");
  // In WAL mode the reader never waits for the writer, and sees committed data only.
  const reader = new Database(path);
  reader.exec("PRAGMA busy_timeout = 5000");
  const lockWait = { timeoutMs: LOCK_WAIT_MS, pause: pauseForLock };
  return groupCommit(sqliteStore({ writer: writer as unknown as SqliteConnection, reader: reader as SqliteConnection, lockWait }), {
    schedule: afterThisTurn,
  });
}

const LOCK_WAIT_MS = 5000;

/**
 * `PRAGMA journal_mode = WAL`, tried again while another process holds the file: SQLite does not
 * call its busy handler for that lock (waiting could deadlock), so two instances opening one new
 * file at the same moment got "database is locked" at once (seen in the suite).
 */
async function switchToWal(writer: { exec(sql: string): Promise<unknown> }): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 1;; attempt++) {
    try {
      await writer.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (err) {
      if (!isBusyError(err) || Date.now() >= deadline) throw err;
      await pauseForLock(attempt);
    }
  }
}

/**
 * Between two tries at another process's write lock: the next turn of the event loop for the
 * first tries (each try is a trip to libsql's thread, tens of microseconds), then 1 ms.
 */
const pauseForLock = (attempt: number) => new Promise<void>((resolve) => (attempt <= 4 ? setImmediate(resolve) : setTimeout(resolve, 1)));
