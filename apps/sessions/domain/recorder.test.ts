import { createClient } from "@libsql/client";
import { beforeEach, describe, expect, it } from "vitest";
import { libsqlStore } from "#lib/db/libsql";
import { applyMigrations, type SqlStore } from "#lib/db";
import { getExecution, listEvents } from "../store/executions.ts";
import { SESSION_MIGRATIONS } from "../store/migrations.ts";
import { ExecutionRecorder } from "./recorder.ts";
import type { EventRecord, ExecutionRecord } from "./records.ts";

let store: SqlStore;
let now = Date.parse("2026-01-02T03:04:05.000Z");
const clock = () => now;

beforeEach(async () => {
  store = libsqlStore(createClient({ url: ":memory:" }));
  await applyMigrations(store, SESSION_MIGRATIONS);
});

const running = (id = crypto.randomUUID()): ExecutionRecord => ({
  id,
  session_id: crypto.randomUUID(),
  kind: "repl",
  input: "1",
  args: {},
  env: {},
  status: "running",
  started_at: new Date(now).toISOString(),
  metrics: { duration_ms: 0, events: 0, output_bytes: 0 },
});
const log = (text: string) => ({ type: "console" as const, payload: { level: "log", text } });
const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe("ExecutionRecorder", () => {
  it("a short execution is stored once, at the end: the final row and its events in one batch", async () => {
    const batches: number[] = [];
    const counting: SqlStore = { ...store, batch: (statements) => (batches.push(statements.length), store.batch(statements)) };
    const r = ExecutionRecorder.begin(counting, clock, running(), { flushMs: 60_000 });
    r.record(log("a"));
    r.record(log("b"));
    expect(await getExecution(store, r.id)).toBeUndefined();
    const done = await r.finish({ status: "ok", duration_ms: 1, output_bytes: 2 });
    expect(batches).toEqual([2]);
    expect(await getExecution(store, r.id)).toEqual(done);
    expect(await listEvents(store, r.id)).toEqual(r.events);
  });

  it("stores the running row flushMs after the start, events or not, so a crash leaves a row to close", async () => {
    const r = ExecutionRecorder.begin(store, clock, running(), { flushMs: 5 });
    await tick(40);
    expect(await getExecution(store, r.id)).toEqual(r.execution);
    r.record(log("a"));
    await tick(40);
    expect(await listEvents(store, r.id)).toEqual(r.events);
    const done = await r.finish({ status: "ok", duration_ms: 50, output_bytes: 1 });
    expect(await getExecution(store, r.id)).toEqual(done);
  });

  it("persist stores the row and the events so far at once (a reader asked); after finish it waits for the final write", async () => {
    const r = ExecutionRecorder.begin(store, clock, running(), { flushMs: 60_000 });
    r.record(log("a"));
    await r.persist();
    expect(await getExecution(store, r.id)).toEqual(r.execution);
    expect(await listEvents(store, r.id)).toEqual(r.events);
    const finishing = r.finish({ status: "ok", duration_ms: 1, output_bytes: 1 });
    await r.persist();
    expect((await getExecution(store, r.id))?.status).toBe("ok");
    await finishing;
  });

  it("many events go in multi-row INSERTs of at most 100 parameters (a Durable Object's limit)", async () => {
    const sizes: number[] = [];
    const counting: SqlStore = {
      ...store,
      batch: (statements) => (sizes.push(...statements.map((s) => s.args?.length ?? 0)), store.batch(statements)),
    };
    const r = ExecutionRecorder.begin(counting, clock, running(), { batchSize: 1000, flushMs: 60_000 });
    for (let i = 0; i < 45; i++) r.record(log(String(i)));
    await r.finish({ status: "ok", duration_ms: 1, output_bytes: 45 });
    expect(sizes).toEqual([15, 100, 100, 25]);
    expect((await listEvents(store, r.id)).map((e) => e.seq)).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
  });

  it("numbers events from 1 without gaps, stamps them with the clock, and writes full batches while running", async () => {
    const r = ExecutionRecorder.begin(store, clock, running(), { batchSize: 2, flushMs: 60_000 });
    expect(r.record(log("a")).seq).toBe(1);
    now += 5;
    const second = r.record(log("b"));
    expect(second).toEqual({ execution_id: r.id, seq: 2, ts: new Date(now).toISOString(), type: "console", payload: { level: "log", text: "b" } });
    r.record(log("c"));
    await tick(10);
    expect((await listEvents(store, r.id)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await getExecution(store, r.id))?.status).toBe("running");
  });

  it("writes a partial batch after flushMs, so a poller sees progress", async () => {
    const r = ExecutionRecorder.begin(store, clock, running(), { batchSize: 100, flushMs: 5 });
    r.record(log("a"));
    expect(await listEvents(store, r.id)).toEqual([]);
    await tick(40);
    expect(await listEvents(store, r.id)).toEqual([r.events[0]]);
  });

  it("finish stores the rest and the final row together; no event is accepted afterwards", async () => {
    const r = ExecutionRecorder.begin(store, clock, running(), { batchSize: 100, flushMs: 60_000 });
    r.record(log("a"));
    r.record(log("b"));
    now += 100;
    const done = await r.finish({ status: "ok", result: { type: "number", preview: "1", json: 1 }, duration_ms: 3.5, output_bytes: 2 });
    expect(done).toMatchObject({
      status: "ok",
      ended_at: new Date(now).toISOString(),
      result: { json: 1 },
      metrics: { duration_ms: 3.5, events: 2, output_bytes: 2 },
    });
    expect(Object.keys(done).at(-1)).toBe("metrics");
    expect(await getExecution(store, r.id)).toEqual(done);
    expect(await listEvents(store, r.id)).toEqual(r.events);
    expect(() => r.record(log("late"))).toThrow(/ended/);
  });

  it("follow hands over the backlog after afterSeq, then live events and the end, with no gap", async () => {
    const r = ExecutionRecorder.begin(store, clock, running());
    r.record(log("1"));
    r.record(log("2"));
    const seen: EventRecord[] = [];
    let ended: ExecutionRecord | undefined;
    const f = r.follow(1, { event: (e) => seen.push(e), end: (e) => (ended = e) })!;
    expect(f.backlog.map((e) => e.seq)).toEqual([2]);
    r.record(log("3"));
    const done = await r.finish({ status: "ok", duration_ms: 1, output_bytes: 3 });
    expect(seen.map((e) => e.seq)).toEqual([3]);
    expect(ended).toEqual(done);
    expect(r.follow(0, { event: () => {}, end: () => {} })).toBeUndefined();
  });

  it("a failed intermediate write is retried, in order, with the final batch", async () => {
    let failNext = true;
    const flaky: SqlStore = {
      ...store,
      async batch(statements) {
        if (failNext && statements.some((s) => s.sql.startsWith("INSERT INTO execution_events"))) {
          failNext = false;
          throw new Error("disk full");
        }
        return store.batch(statements);
      },
    };
    const errors: unknown[] = [];
    const r = ExecutionRecorder.begin(flaky, clock, running(), { batchSize: 2, onWriteError: (e) => errors.push(e) });
    r.record(log("a"));
    r.record(log("b"));
    await tick(10);
    r.record(log("c"));
    await r.finish({ status: "ok", duration_ms: 1, output_bytes: 3 });
    expect(errors).toHaveLength(1);
    expect((await listEvents(store, r.id)).map((e) => e.payload.text)).toEqual(["a", "b", "c"]);
  });
});
