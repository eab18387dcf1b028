/**
 * The IdpStateStore contract, the same for the in-memory store and the SQL store; and what only
 * the SQL store promises: two stores on one database file (two instances of the provider) agree
 * on every single-use decision, and what one writes the other reads.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqlStore } from "#lib/db/open";
import { nodeRuntime } from "#lib/adapters/node";
import { applyMigrations } from "#lib/db";
import { createClient } from "@libsql/client/web";
import { libsqlStore } from "#lib/db/libsql";
import { startHranaServer } from "#test/fixtures/hrana-server.ts";
import { MemoryStateStore } from "./memory.ts";
import { IDP_MIGRATIONS_TABLE, sqlStateStore } from "./sql.ts";
import type { IdpStateStore } from "./store.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "idp-state-"));
  dirs.push(dir);
  return `file:${join(dir, "idp.db")}`;
}

const openSql = async (url: string) => sqlStateStore(await openSqlStore(nodeRuntime(), url), { shared: true });

const STORES: [string, () => Promise<IdpStateStore>][] = [
  ["MemoryStateStore", async () => new MemoryStateStore()],
  ["sqlStateStore (:memory:)", () => openSql(":memory:")],
  ["sqlStateStore (file)", () => openSql(dbFile())],
  [
    "sqlStateStore (libSQL over HTTP: @libsql/client/web and a test Hrana server)",
    async () => {
      const server = await startHranaServer(dbFile().slice("file:".length));
      const state = await sqlStateStore(libsqlStore(createClient({ url: server.url })), { shared: true });
      return { ...state, shared: true, close: async () => (await state.close(), await server.close()) };
    },
  ],
];

const keys = async (s: IdpStateStore, kind: Parameters<IdpStateStore["entries"]>[0]) => (await s.entries(kind)).map(([k]) => k);

describe.each(STORES)("%s", (_name, open) => {
  it("stores, lists in insertion order and deletes per kind", async () => {
    const s = await open();
    await s.set("code", "a", { n: 1 }, { pruneAt: 10 });
    await s.set("code", "b", { n: 2 }, { pruneAt: 20 });
    await s.set("session", "a", { n: 3 }, { pruneAt: 10 });
    await s.set("code", "a", { n: 4 }, { pruneAt: 10 }); // replaced in place: keeps its position
    expect(await s.get("code", "a")).toEqual({ n: 4 });
    expect(await keys(s, "code")).toEqual(["a", "b"]);
    await s.delete("code", "a");
    expect(await keys(s, "code")).toEqual(["b"]);
    expect(await keys(s, "session")).toEqual(["a"]);
    await s.close();
  });

  it("prunes what is due and keeps what is not (or has no prune time)", async () => {
    const s = await open();
    for (let i = 0; i < 100; i++) await s.set("access_token", `t${i}`, i, { pruneAt: i * 10 });
    await s.set("key", "k", "kept");
    await s.prune(60_000); // a full sweep
    await s.set("access_token", "late", 1, { pruneAt: 70_000 });
    await s.prune(60_500);
    expect(await keys(s, "access_token")).toEqual(["late"]);
    expect(await s.get("key", "k")).toBe("kept");
    await s.close();
  });

  it("take gives the record once", async () => {
    const s = await open();
    await s.set("code", "c", { client_id: "x" }, { pruneAt: 100 });
    const [first, second] = await Promise.all([s.take("code", "c"), s.take("code", "c")]);
    expect([first, second].filter((r) => r !== undefined)).toEqual([{ client_id: "x" }]);
    expect(await s.take("code", "c")).toBeUndefined();
    // With the value already read: taken only while the record still equals it.
    await s.set("device_grant", "d", { status: "approved" }, { pruneAt: 100 });
    expect(await s.take("device_grant", "d", { status: "pending" })).toBeUndefined();
    const takes = await Promise.all([s.take("device_grant", "d", { status: "approved" }), s.take("device_grant", "d", { status: "approved" })]);
    expect(takes.filter((t) => t !== undefined)).toEqual([{ status: "approved" }]);
    await s.close();
  });

  it("add inserts over nothing or an expired record, never over a live one", async () => {
    const s = await open();
    const results = await Promise.all([s.add("replay", "j", 1, 0, { pruneAt: 100 }), s.add("replay", "j", 2, 0, { pruneAt: 100 })]);
    expect(results.sort()).toEqual([false, true]);
    expect(await s.add("replay", "j", 3, 99, { pruneAt: 200 })).toBe(false);
    expect(await s.add("replay", "j", 4, 100, { pruneAt: 200 })).toBe(true);
    expect(await s.get("replay", "j")).toBe(4);
    expect(await s.add("key", "k", "a", 0)).toBe(true);
    expect(await s.add("key", "k", "b", Number.MAX_SAFE_INTEGER)).toBe(false); // no prune time: never expired
    await s.close();
  });

  it("swap replaces only the value that was read", async () => {
    const s = await open();
    const pending = { status: "pending", interval: 5 };
    await s.set("device_grant", "d", pending, { pruneAt: 100 });
    const read = (await s.get<typeof pending>("device_grant", "d"))!;
    expect(await s.swap("device_grant", "d", read, { ...read, status: "approved" })).toBe(true);
    expect(await s.swap("device_grant", "d", read, { ...read, status: "denied" })).toBe(false);
    expect(await s.get("device_grant", "d")).toEqual({ status: "approved", interval: 5 });
    expect(await s.swap("device_grant", "missing", read, read)).toBe(false);
    await s.close();
  });

  it("deleteGroup drops the group's records of the named kinds only", async () => {
    const s = await open();
    await s.set("access_token", "a1", 1, { group: "g1" });
    await s.set("refresh_token", "r1", 1, { group: "g1" });
    await s.set("access_token", "a2", 1, { group: "g2" });
    await s.set("session", "s1", 1, { group: "g1" });
    await s.deleteGroup(["access_token", "refresh_token"], "g1");
    expect(await keys(s, "access_token")).toEqual(["a2"]);
    expect(await keys(s, "refresh_token")).toEqual([]);
    expect(await keys(s, "session")).toEqual(["s1"]);
    await s.close();
  });

  it("prune with limits keeps the newest records of a kind; clear empties only the named kinds", async () => {
    const s = await open();
    for (let i = 0; i < 10; i++) await s.set("session", `s${i}`, i, { pruneAt: 1e12 });
    await s.set("code", "c", 1, { pruneAt: 5 });
    expect(await s.prune(10, { session: 3, code: 5 })).toEqual({ session: 7, code: 0 });
    expect(await s.prune(10, { session: 3 })).toEqual({ session: 0 });
    expect(await keys(s, "code")).toEqual([]);
    expect(await keys(s, "session")).toEqual(["s7", "s8", "s9"]);
    await s.set("key", "k", 2);
    await s.clear(["session"]);
    expect(await keys(s, "session")).toEqual([]);
    expect(await keys(s, "key")).toEqual(["k"]);
    await s.close();
  });
});

describe("two SQL stores on one file (two instances)", () => {
  it("each single-use record is spent once however the attempts are spread, and writes are seen by both", async () => {
    const url = dbFile();
    const [a, b] = await Promise.all([openSql(url), openSql(url)]); // migrations raced too
    for (let i = 0; i < 50; i++) await a.set("code", `c${i}`, { i }, { pruneAt: 1e12 });
    const takes = await Promise.all(Array.from({ length: 50 }, (_, i) => [a.take("code", `c${i}`), b.take("code", `c${i}`)]).flat());
    expect(takes.filter((t) => t !== undefined)).toHaveLength(50);
    const adds = await Promise.all(
      Array.from({ length: 50 }, (_, i) => [a.add("replay", `j${i}`, 1, 0, { pruneAt: 100 }), b.add("replay", `j${i}`, 1, 0, { pruneAt: 100 })]).flat(),
    );
    expect(adds.filter(Boolean)).toHaveLength(50);
    await a.set("setting", "jwks_mode", "500");
    expect(await b.get("setting", "jwks_mode")).toBe("500");
    await Promise.all([a.close(), b.close()]);
  });

  it("migrations applied by one store are not applied again by the next", async () => {
    const url = dbFile();
    await (await openSql(url)).close();
    const sql = await openSqlStore(nodeRuntime(), url);
    const rows = await sql.query<{ version: number }>(`SELECT version FROM ${IDP_MIGRATIONS_TABLE} ORDER BY version`);
    expect(rows.map((r) => Number(r.version))).toEqual([1, 2]);
    expect(await applyMigrations(sql, [], { table: IDP_MIGRATIONS_TABLE })).toEqual([]);
    await sql.close();
  });
});

describe("a Durable Object's storage from before the migrations", () => {
  it("keeps its records: version 1 is its table, version 2 adds to it", async () => {
    const sql = await openSqlStore(nodeRuntime(), ":memory:");
    // The table the object wrote before, with a live session in it.
    await sql.execute("CREATE TABLE idp_state (kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, prune_at REAL, PRIMARY KEY (kind, key))");
    await sql.execute("INSERT INTO idp_state (kind, key, value, prune_at) VALUES ('session', 's1', '{\"login\":\"alice\"}', 1e12)");
    const s = await sqlStateStore(sql, { shared: false });
    expect(await s.get("session", "s1")).toEqual({ login: "alice" });
    await s.set("session", "s2", { login: "bob" }, { group: "bob-sub" });
    await s.deleteGroup(["session"], "bob-sub");
    expect(await keys(s, "session")).toEqual(["s1"]);
    await s.close();
  });
});
