/** Opening a database file another process holds: the switch to WAL waits for it. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { afterEach, describe, expect, it } from "vitest";
import { openSqlStore } from "./open.ts";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("openSqlStore on a file another connection holds", () => {
  it("waits for its lock to switch the file to WAL, where SQLite answered 'database is locked' at once", async () => {
    dir = mkdtempSync(join(tmpdir(), "open-test-"));
    const path = join(dir, "state.db");
    const holder = new Database(path);
    holder.exec("CREATE TABLE t (x)");
    // A write transaction in rollback mode (another instance migrating the new file): SQLite
    // does not wait for that lock on the way to WAL, since waiting there could deadlock.
    holder.exec("BEGIN IMMEDIATE");
    holder.exec("INSERT INTO t VALUES (1)");
    setTimeout(() => holder.exec("COMMIT"), 200);
    const store = await openSqlStore(undefined, `file:${path}`);
    expect(await store.query<{ journal_mode: string }>("PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }]);
    await store.close();
    holder.close();
  });
});
