/** Rate-limit counters: bounded in memory, exact across two hosts on one libSQL database. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqlStore } from "#lib/db/open";
import type { SqlStore } from "#lib/db";
import { createRouteHost } from "../host/host.ts";
import { memoryRateLimitStore, PRUNE_BATCH, type RateLimitStore, sqlRateLimitStore } from "./rate-limits.ts";
import { prepareRoutesStore } from "./store.ts";

const T0 = Date.parse("2026-11-27T12:00:00.000Z");
const dir = mkdtempSync(join(tmpdir(), "routes-rate-"));
const opened: SqlStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh connection (writer and reader) to the database file `name`, as a second process would open it. */
async function connect(name: string): Promise<SqlStore> {
  const store = await openSqlStore(undefined, `file:${join(dir, name)}`);
  opened.push(store);
  await prepareRoutesStore(store);
  return store;
}

async function burst(stores: RateLimitStore[], n: number, key: string, limit: number, now = T0) {
  const hits = await Promise.all(Array.from({ length: n }, (_, i) => stores[i % stores.length]!.hit(key, limit, 60_000, now)));
  return hits.filter((h) => h.allowed).length;
}

describe("memoryRateLimitStore", () => {
  it("counts within a window and starts again in the next", async () => {
    const store = memoryRateLimitStore();
    expect(await store.hit("k", 2, 60_000, T0 + 1)).toEqual({ allowed: true, count: 1, resetAt: T0 + 60_000 });
    expect(await store.hit("k", 2, 60_000, T0 + 2)).toEqual({ allowed: true, count: 2, resetAt: T0 + 60_000 });
    expect(await store.hit("k", 2, 60_000, T0 + 3)).toEqual({ allowed: false, count: 2, resetAt: T0 + 60_000 });
    expect(await store.hit("k", 2, 60_000, T0 + 60_000)).toEqual({ allowed: true, count: 1, resetAt: T0 + 120_000 });
  });

  it("stays bounded under a flood of keys, and a client the flood did not touch last keeps its count", async () => {
    const store = memoryRateLimitStore({ maxKeys: 1000 });
    await store.hit("attacker", 1, 60_000, T0);
    for (let i = 0; i < 100_000; i++) {
      await store.hit(`flood-${i}`, 5, 60_000, T0);
      if (i % 500 === 0) expect((await store.hit("attacker", 1, 60_000, T0)).allowed).toBe(false); // refused, and still recent
    }
    expect(store.size).toBe(1000);
    expect((await store.hit("attacker", 1, 60_000, T0)).allowed).toBe(false);
  });
});

describe("sqlRateLimitStore", () => {
  it("counts exactly across two hosts on one database file, under concurrent bursts", async () => {
    const [a, b] = [sqlRateLimitStore(await connect("shared.db")), sqlRateLimitStore(await connect("shared.db"))];
    expect(await burst([a, b], 200, "burst", 50)).toBe(50);
    // Both see the same spent window...
    expect((await a.hit("burst", 50, 60_000, T0 + 10)).allowed).toBe(false);
    expect((await b.hit("burst", 50, 60_000, T0 + 10)).allowed).toBe(false);
    // ... and both start the next one together.
    expect(await burst([a, b], 30, "burst", 50, T0 + 60_000)).toBe(30);
    const next = await a.hit("burst", 50, 60_000, T0 + 60_001);
    expect(next).toEqual({ allowed: true, count: 31, resetAt: T0 + 120_000 });
    expect(await burst([b, a], 40, "burst", 50, T0 + 60_002)).toBe(19);
  });

  it("keeps keys apart and prunes the windows that ended", async () => {
    const store = await connect("prune.db");
    const limits = sqlRateLimitStore(store);
    for (let i = 0; i < 20; i++) await limits.hit(`k${i}`, 1, 1000, T0);
    expect((await limits.hit("k1", 1, 1000, T0)).allowed).toBe(false);
    expect((await limits.hit("k21", 1, 1000, T0)).allowed).toBe(true);
    // A minute on, the first write prunes every ended window.
    await limits.hit("later", 1, 1000, T0 + 120_000);
    expect(await store.query("SELECT key FROM rate_limit_counters")).toEqual([{ key: "later" }]);
  });

  it("prunes a flood's ended windows a bounded batch per count, until none is left", async () => {
    const store = await connect("prune-batch.db");
    const limits = sqlRateLimitStore(store);
    // 2.5 batches of ended windows, as a flood of distinct clients leaves them.
    const flood = Math.floor(PRUNE_BATCH * 2.5);
    await store.execute(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO rate_limit_counters (key, window_start, count, expires_at) SELECT 'flood-' || i, ?, 1, ? FROM n`,
      [flood, T0, T0 + 1000],
    );
    const left = async () => Number((await store.query<{ n: number }>("SELECT count(*) AS n FROM rate_limit_counters WHERE key LIKE 'flood-%'"))[0]!.n);
    await limits.hit("a", 5, 1000, T0 + 120_000);
    expect(await left()).toBe(flood - PRUNE_BATCH);
    await limits.hit("a", 5, 1000, T0 + 120_001); // a backlog: pruned again, not a minute later
    expect(await left()).toBe(flood - 2 * PRUNE_BATCH);
    await limits.hit("a", 5, 1000, T0 + 120_002);
    expect(await left()).toBe(0);
    await store.execute("INSERT INTO rate_limit_counters VALUES ('flood-late', ?, 1, ?)", [T0, T0 + 1000]);
    await limits.hit("a", 5, 1000, T0 + 120_003); // no backlog: the next prune is a minute on
    expect(await left()).toBe(1);
    expect((await limits.hit("a", 5, 1000, T0 + 120_004)).count).toBe(5);
  });

  it("lets two route hosts on one database share a route's counter", async () => {
    const script = (host: ReturnType<typeof createRouteHost>) => {
      host.registerPlanned(
        { method: "GET", pattern: "/limited", public: true, rateLimits: [{ limit: 3, windowSeconds: 60, key: "ip" }] },
        () => new Response("ok"),
      );
      return host;
    };
    const now = () => new Date(T0 + 5000);
    const one = script(createRouteHost({ rateLimits: sqlRateLimitStore(await connect("hosts.db")), now }));
    const two = script(createRouteHost({ rateLimits: sqlRateLimitStore(await connect("hosts.db")), now }));
    const get = (host: typeof one, ip: string) => host.fetch(new Request("http://h.test/limited"), { clientAddress: ip, requestId: "r" });
    const statuses = await Promise.all([one, two, one, two, one].map((h) => get(h, "192.0.2.1").then((r) => r.status)));
    expect(statuses.sort()).toEqual([200, 200, 200, 429, 429]);
    const refused = await get(two, "192.0.2.1");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("55");
    expect((await get(two, "192.0.2.2")).headers.get("ratelimit")).toBe('"ip-60s";r=2;t=55');
  });
});
