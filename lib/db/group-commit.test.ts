import { createClient } from "@libsql/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { groupCommit } from "./group-commit.ts";
import { libsqlStore } from "./libsql.ts";
import { isUniqueViolation, type SqlStatement, type SqlStore } from "./store.ts";

let inner: SqlStore;
let transactions: SqlStatement[][];
/** The inner store, recording each transaction it runs. */
let spied: SqlStore;

beforeEach(async () => {
  inner = libsqlStore(createClient({ url: ":memory:" }));
  await inner.execute("CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)");
  transactions = [];
  spied = { ...inner, batch: (statements) => (transactions.push(statements), inner.batch(statements)) };
});
afterEach(() => inner.close());

const insert = (id: string, n = 0): SqlStatement => ({ sql: "INSERT INTO items (id, n) VALUES (?, ?)", args: [id, n] });
const rows = () => inner.query<{ id: string; n: number }>("SELECT id, n FROM items ORDER BY rowid");

describe("groupCommit", () => {
  it("merges the batches of one turn into one transaction; each caller gets its own change counts", async () => {
    const store = groupCommit(spied);
    const results = await Promise.all([
      store.batch([insert("a"), insert("b")]),
      store.execute("INSERT INTO items (id, n) VALUES ('c', 0)"),
      store.batch([{ sql: "UPDATE items SET n = n + 1" }]),
    ]);
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toHaveLength(4);
    expect(results).toEqual([[1, 1], { changes: 1 }, [3]]);
    expect(await rows()).toEqual([
      { id: "a", n: 1 },
      { id: "b", n: 1 },
      { id: "c", n: 1 },
    ]);
  });

  it("a failing batch fails alone: the merged transaction is rolled back and each batch re-run by itself", async () => {
    await inner.execute("INSERT INTO items (id, n) VALUES ('taken', 0)");
    const store = groupCommit(spied);
    const [first, bad, last] = await Promise.allSettled([
      store.batch([insert("a")]),
      store.batch([insert("b"), insert("taken")]),
      store.batch([insert("c")]),
    ]);
    expect(first).toEqual({ status: "fulfilled", value: [1] });
    expect(bad.status).toBe("rejected");
    expect(isUniqueViolation((bad as PromiseRejectedResult).reason)).toBe(true);
    expect(last).toEqual({ status: "fulfilled", value: [1] });
    expect(transactions.map((t) => t.length)).toEqual([4, 1, 2, 1]); // merged, then each alone
    expect((await rows()).map((r) => r.id)).toEqual(["taken", "a", "c"]); // nothing of "b"
  });

  it("keeps arrival order within and across groups", async () => {
    const store = groupCommit(spied);
    const writes = [store.batch([insert("x", 1)])];
    for (let i = 2; i <= 5; i++) writes.push(store.batch([{ sql: "UPDATE items SET n = n * 10 + ? WHERE id = 'x'", args: [i] }]));
    await Promise.all(writes);
    await store.batch([{ sql: "UPDATE items SET n = n * 10 + 6 WHERE id = 'x'" }]);
    expect(await rows()).toEqual([{ id: "x", n: 123456 }]);
    expect(transactions.map((t) => t.length)).toEqual([5, 1]);
  });

  it("writes that arrive while a group commits form the next group", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: SqlStore = { ...spied, batch: async (statements) => (await gate, spied.batch(statements)) };
    const store = groupCommit(slow);
    const first = store.batch([insert("a")]);
    await new Promise((r) => setTimeout(r, 5)); // the first group is committing now
    const later = [store.batch([insert("b")]), store.batch([insert("c")])];
    release();
    await Promise.all([first, ...later]);
    expect(transactions.map((t) => t.map((s) => s.args![0]))).toEqual([["a"], ["b", "c"]]);
  });

  it("caps a merged transaction at maxStatements (a batch larger than that still runs, alone)", async () => {
    const store = groupCommit(spied, { maxStatements: 3 });
    await Promise.all([
      store.batch([insert("a"), insert("b")]),
      store.batch([insert("c")]),
      store.batch([insert("d"), insert("e"), insert("f"), insert("g")]),
      store.batch([insert("h")]),
    ]);
    expect(transactions.map((t) => t.length)).toEqual([3, 4, 1]);
    expect((await rows()).map((r) => r.id).join("")).toBe("abcdefgh");
  });

  it("reads are not queued: a write is visible once its promise resolves", async () => {
    const store = groupCommit(spied);
    const write = store.batch([insert("a")]);
    expect(await store.query("SELECT id FROM items")).toEqual([]); // not acknowledged yet
    await write;
    expect(await store.query("SELECT id FROM items")).toEqual([{ id: "a" }]);
  });

  it("close commits what was accepted, then closes the store", async () => {
    let closed = false;
    const store = groupCommit({ ...spied, close: async () => void (closed = true) });
    let committed = false;
    const pending = store.batch([insert("b")]).then(() => (committed = true));
    await store.close();
    expect(committed && closed).toBe(true);
    await pending;
    expect((await rows()).map((r) => r.id)).toEqual(["b"]);
  });
});
