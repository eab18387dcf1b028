import { createClient } from "@libsql/client";
import { createClient as createWebClient } from "@libsql/client/web";
import Database from "libsql";
import AsyncDatabase from "libsql/promise";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { groupCommit } from "./group-commit.ts";
import { libsqlStore } from "./libsql.ts";
import { applyMigrations, type Migration } from "./migrate.ts";
import { type SqliteConnection, sqliteStore } from "./sqlite.ts";
import { isUniqueViolation, type SqlStore } from "./store.ts";
import { startHranaServer } from "../../test/fixtures/hrana-server.ts";

/** Every SqlStore the Node and Deno entries (and the IdP's edge entry) can open, the same contract for each. */
const STORES: [string, () => SqlStore | Promise<SqlStore>][] = [
  ["libsqlStore (@libsql/client, :memory:)", () => libsqlStore(createClient({ url: ":memory:" }))],
  ["sqliteStore (:memory:, one connection)", () => sqliteStore({ writer: new Database(":memory:") as SqliteConnection })],
  [
    "sqliteStore (file, async writer + reader) with group commit",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "sqlite-store-"));
      const path = join(dir, "test.db");
      const setup = new Database(path);
      setup.exec("PRAGMA journal_mode = WAL");
      setup.close();
      const store = sqliteStore({ writer: new AsyncDatabase(path, {}) as unknown as SqliteConnection, reader: new Database(path) as SqliteConnection });
      const grouped = groupCommit(store);
      return { ...grouped, close: async () => (await grouped.close(), rmSync(dir, { recursive: true, force: true })) };
    },
  ],
  [
    "libsqlStore (@libsql/client/web over HTTP, a test Hrana server on a file)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "hrana-store-"));
      const server = await startHranaServer(join(dir, "remote.db"), { authToken: "test-token" });
      const store = libsqlStore(createWebClient({ url: server.url, authToken: "test-token" }));
      return { ...store, close: async () => (await store.close(), await server.close(), rmSync(dir, { recursive: true, force: true })) };
    },
  ],
];

const MIGRATIONS: Migration[] = [
  { version: 1, name: "items", statements: ["CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL, data BLOB)"] },
  { version: 2, name: "tags", statements: ["CREATE TABLE tags (item_id TEXT NOT NULL, tag TEXT NOT NULL, UNIQUE (item_id, tag))"] },
];

describe.each(STORES)("%s and applyMigrations", (_name, open) => {
  let store: SqlStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(() => store.close());

  it("applies each migration once, in version order, and records it", async () => {
    expect(await applyMigrations(store, [MIGRATIONS[1]!, MIGRATIONS[0]!])).toEqual([1, 2]);
    expect(await applyMigrations(store, MIGRATIONS)).toEqual([]);
    const rows = await store.query<{ version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version");
    expect(rows).toEqual([
      { version: 1, name: "items" },
      { version: 2, name: "tags" },
    ]);
  });

  it("a failing migration leaves nothing half-applied", async () => {
    const bad: Migration = { version: 3, name: "bad", statements: ["CREATE TABLE ok_part (x INTEGER)", "CREATE TABLE items (dup INTEGER)"] };
    await applyMigrations(store, MIGRATIONS);
    await expect(applyMigrations(store, [...MIGRATIONS, bad])).rejects.toThrow();
    expect(await store.query("SELECT name FROM sqlite_master WHERE name = 'ok_part'")).toEqual([]);
    expect(await store.query("SELECT version FROM schema_migrations WHERE version = 3")).toEqual([]);
  });

  it("binds parameters, returns rows as objects, and round-trips blobs", async () => {
    await applyMigrations(store, MIGRATIONS);
    const blob = new Uint8Array([0, 1, 254, 255]);
    expect(await store.execute("INSERT INTO items (id, n, data) VALUES (?, ?, ?)", ["a", 7, blob])).toEqual({ changes: 1 });
    const [row] = await store.query<{ id: string; n: number; data: Uint8Array }>("SELECT id, n, data FROM items WHERE id = ?", ["a"]);
    expect(row!.id).toBe("a");
    expect(Number(row!.n)).toBe(7);
    expect(Array.from(row!.data)).toEqual([0, 1, 254, 255]);
  });

  it("runs a batch atomically: all statements or none", async () => {
    await applyMigrations(store, MIGRATIONS);
    expect(
      await store.batch([
        { sql: "INSERT INTO items (id, n) VALUES (?, ?)", args: ["a", 1] },
        { sql: "UPDATE items SET n = n + 1 WHERE id = ?", args: ["a"] },
      ]),
    ).toEqual([1, 1]);
    await expect(
      store.batch([
        { sql: "INSERT INTO items (id, n) VALUES (?, ?)", args: ["b", 1] },
        { sql: "INSERT INTO items (id, n) VALUES (?, ?)", args: ["a", 1] },
      ]),
    ).rejects.toSatisfy(isUniqueViolation);
    expect(await store.query("SELECT id FROM items ORDER BY id")).toEqual([{ id: "a" }]);
    expect(await store.batch([])).toEqual([]);
  });

  it("isUniqueViolation tells a duplicate from other errors", async () => {
    await applyMigrations(store, MIGRATIONS);
    await store.execute("INSERT INTO tags (item_id, tag) VALUES ('a', 'x')");
    const dup = await store.execute("INSERT INTO tags (item_id, tag) VALUES ('a', 'x')").catch((e: unknown) => e);
    expect(isUniqueViolation(dup)).toBe(true);
    const other = await store.execute("INSERT INTO nope VALUES (1)").catch((e: unknown) => e);
    expect(isUniqueViolation(other)).toBe(false);
  });
});
