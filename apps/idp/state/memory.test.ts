import { describe, expect, it } from "vitest";
import { MemoryStateStore } from "./memory.ts";
import { durableStateStore } from "./durable.ts";
import type { DurableSqlStorage } from "../../../lib/db/durable.ts";

describe("MemoryStateStore", () => {
  it("stores, lists in insertion order, counts and deletes per kind", () => {
    const s = new MemoryStateStore();
    s.set("code", "a", { n: 1 }, 10);
    s.set("code", "b", { n: 2 }, 20);
    s.set("session", "a", { n: 3 }, 10);
    expect(s.get("code", "a")).toEqual({ n: 1 });
    expect(s.entries("code").map(([k]) => k)).toEqual(["a", "b"]);
    s.delete("code", "a");
    expect(s.count("code")).toBe(1);
    expect(s.count("session")).toBe(1);
  });
  it("prunes what is due and keeps what is not (or has no prune time)", () => {
    const s = new MemoryStateStore();
    for (let i = 0; i < 100; i++) s.set("access_token", `t${i}`, i, i * 10);
    s.set("key", "k", "kept");
    s.prune(500);
    expect(s.count("access_token")).toBe(49);
    expect(s.get("key", "k")).toBe("kept");
  });
  it("a full sweep also drops out-of-order records", () => {
    const s = new MemoryStateStore();
    s.prune(0); // first call is a full sweep; the next minute only trims from the oldest end
    s.set("refresh_token", "late", 1, 1000);
    s.set("refresh_token", "early", 2, 10);
    s.prune(100);
    expect(s.count("refresh_token")).toBe(2);
    s.prune(60_001);
    expect(s.count("refresh_token")).toBe(0);
  });
  it("trimOldest keeps the newest records of a kind", () => {
    const s = new MemoryStateStore();
    for (let i = 0; i < 10; i++) s.set("session", `s${i}`, i, 1e12);
    expect(s.trimOldest("session", 3)).toBe(7);
    expect(s.entries("session").map(([k]) => k)).toEqual(["s7", "s8", "s9"]);
  });
  it("clear empties only the named kinds", () => {
    const s = new MemoryStateStore();
    s.set("code", "a", 1);
    s.set("key", "k", 2);
    s.clear(["code"]);
    expect(s.count("code")).toBe(0);
    expect(s.count("key")).toBe(1);
  });
});

/** A stand-in for ctx.storage.sql that understands exactly the statements durable.ts sends. */
function fakeSql(): DurableSqlStorage {
  const rows = new Map<string, { kind: string; key: string; value: string; prune_at: number | null }>();
  const exec = (query: string, ...args: unknown[]) => {
    const q = query.trim();
    let out: Record<string, unknown>[] = [];
    if (q.startsWith("INSERT OR REPLACE")) {
      const [kind, key, value, prune_at] = args as [string, string, string, number | null];
      rows.delete(`${kind}\u0000${key}`);
      rows.set(`${kind}\u0000${key}`, { kind, key, value, prune_at });
    } else if (q.startsWith("DELETE FROM idp_state WHERE kind = ? AND key = ?")) rows.delete(`${args[0]}\u0000${args[1]}`);
    else if (q.startsWith("DELETE FROM idp_state WHERE kind = ?")) {
      for (const [k, r] of rows) if (r.kind === args[0]) rows.delete(k);
    } else if (q.startsWith("DELETE FROM idp_state WHERE prune_at")) {
      for (const [k, r] of rows) if (r.prune_at !== null && r.prune_at <= (args[0] as number)) rows.delete(k);
    } else if (q.startsWith("SELECT")) out = [...rows.values()];
    return { toArray: () => out, rowsWritten: 0 };
  };
  return { sql: { exec }, transactionSync: (fn) => fn() };
}

describe("durableStateStore", () => {
  it("writes through, so a new store over the same storage (a restarted object) sees the state", () => {
    const storage = fakeSql();
    const first = durableStateStore(storage);
    first.set("code", "c1", { client_id: "dev-client" }, 1000);
    first.set("session", "s1", { login: "alice" }, 5000);
    first.set("key", "dev-key-1", { kty: "RSA" });
    first.set("replay", "gone", 1, 50);
    first.delete("session", "s1");
    first.prune(100);
    const restarted = durableStateStore(storage);
    expect(restarted.get("code", "c1")).toEqual({ client_id: "dev-client" });
    expect(restarted.get("session", "s1")).toBeUndefined();
    expect(restarted.get("key", "dev-key-1")).toEqual({ kty: "RSA" });
    expect(restarted.get("replay", "gone")).toBeUndefined();
    restarted.clear(["code"]);
    expect(durableStateStore(storage).count("code")).toBe(0);
  });
});
