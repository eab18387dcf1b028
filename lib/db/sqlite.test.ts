import Database from "libsql";
import AsyncDatabase from "libsql/promise";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SqliteConnection, sqliteStore } from "./sqlite.ts";
import { isBusyError } from "./store.ts";

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sqlite-store-"));
  path = join(dir, "test.db");
  const setup = new Database(path);
  setup.exec("PRAGMA journal_mode = WAL");
  setup.exec("CREATE TABLE items (id TEXT PRIMARY KEY)");
  setup.close();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const insert = (id: string) => ({ sql: "INSERT INTO items (id) VALUES (?)", args: [id] });

describe("sqliteStore", () => {
  it("reads see a batch only once it has committed (the commit runs through the asynchronous API)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = new AsyncDatabase(path, {}) as unknown as SqliteConnection;
    let committing = false;
    const writer: SqliteConnection = {
      prepare: (sql) => real.prepare(sql),
      exec: (sql) => (sql === "COMMIT" ? ((committing = true), gate.then(() => real.exec(sql))) : real.exec(sql)),
      close: () => real.close(),
    };
    const store = sqliteStore({ writer, reader: new Database(path) as SqliteConnection });
    const write = store.batch([insert("a"), insert("b")]);
    while (!committing) await new Promise((r) => setTimeout(r, 1));
    expect(await store.query("SELECT id FROM items")).toEqual([]); // written, not committed
    release();
    expect(await write).toEqual([1, 1]);
    expect(await store.query("SELECT id FROM items ORDER BY id")).toEqual([{ id: "a" }, { id: "b" }]);
    await store.close();
  });

  it("prepares each statement text once per connection", async () => {
    const prepared: string[] = [];
    const count = (c: SqliteConnection): SqliteConnection => ({
      prepare: (sql) => (prepared.push(sql), c.prepare(sql)),
      exec: (sql) => c.exec(sql),
      close: () => c.close(),
    });
    const store = sqliteStore({ writer: count(new Database(path) as SqliteConnection), reader: count(new Database(path) as SqliteConnection) });
    for (let i = 0; i < 3; i++) {
      await store.batch([insert(`x${i}`)]);
      await store.query("SELECT id FROM items WHERE id = ?", [`x${i}`]);
    }
    // BEGIN and COMMIT go through exec (the asynchronous API off the JavaScript thread, when the writer has it).
    expect(prepared.sort()).toEqual(["INSERT INTO items (id) VALUES (?)", "ROLLBACK", "SELECT id FROM items WHERE id = ?"]);
    await store.close();
  });

  it("batches on one store run one after the other; a failed one leaves the connection usable", async () => {
    const store = sqliteStore({ writer: new AsyncDatabase(path, {}) as unknown as SqliteConnection, reader: new Database(path) as SqliteConnection });
    const results = await Promise.allSettled([
      store.batch([insert("a")]),
      store.batch([insert("b"), insert("a")]),
      store.execute("INSERT INTO items (id) VALUES ('c')"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await store.query("SELECT id FROM items ORDER BY id")).toEqual([{ id: "a" }, { id: "c" }]);
    await store.close();
  });

  it("with lockWait, a batch that finds another connection's write lock tries again after each pause and commits once it is free", async () => {
    const other = new Database(path) as SqliteConnection;
    other.exec("BEGIN IMMEDIATE"); // another process holding the write lock
    const writer = new AsyncDatabase(path, {}) as unknown as SqliteConnection;
    await writer.exec("PRAGMA busy_timeout = 0");
    const pauses: number[] = [];
    const pause = async (attempt: number) => {
      pauses.push(attempt);
      if (attempt === 3) other.exec("COMMIT");
    };
    const store = sqliteStore({ writer, reader: new Database(path) as SqliteConnection, lockWait: { timeoutMs: 5000, pause } });
    expect(await store.batch([insert("a")])).toEqual([1]);
    expect(pauses).toEqual([1, 2, 3]);
    expect(await store.query("SELECT id FROM items")).toEqual([{ id: "a" }]);
    await store.close();
    other.close();
  });

  it("with lockWait, gives up with the busy error once the wait is over, and nothing is written", async () => {
    const other = new Database(path) as SqliteConnection;
    other.exec("BEGIN IMMEDIATE");
    const writer = new AsyncDatabase(path, {}) as unknown as SqliteConnection;
    await writer.exec("PRAGMA busy_timeout = 0");
    let clock = 0;
    const lockWait = { timeoutMs: 100, now: () => clock, pause: async () => void (clock += 40) };
    const store = sqliteStore({ writer, reader: new Database(path) as SqliteConnection, lockWait });
    const err = await store.batch([insert("a")]).catch((e: unknown) => e);
    expect(isBusyError(err)).toBe(true);
    expect(clock).toBe(120); // three pauses, then the deadline
    other.exec("ROLLBACK");
    expect(await store.query("SELECT id FROM items")).toEqual([]);
    await store.close();
    other.close();
  });
});
