import { createClient } from "@libsql/client";
import { beforeEach, describe, expect, it } from "vitest";
import { libsqlStore } from "../../../lib/db/libsql.ts";
import { applyMigrations } from "../../../lib/db/migrate.ts";
import type { SqlStore } from "../../../lib/db/store.ts";
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
  it("stores the running row before anything runs", async () => {
    const r = await ExecutionRecorder.start(store, clock, running());
    expect(await getExecution(store, r.id)).toEqual(r.execution);
  });

  it("numbers events from 1 without gaps, stamps them with the clock, and writes full batches while running", async () => {
    const r = await ExecutionRecorder.start(store, clock, running(), { batchSize: 2, flushMs: 60_000 });
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
    const r = await ExecutionRecorder.start(store, clock, running(), { batchSize: 100, flushMs: 5 });
    r.record(log("a"));
    expect(await listEvents(store, r.id)).toEqual([]);
    await tick(40);
    expect(await listEvents(store, r.id)).toEqual([r.events[0]]);
  });

  it("finish stores the rest and the final row together; no event is accepted afterwards", async () => {
    const r = await ExecutionRecorder.start(store, clock, running(), { batchSize: 100, flushMs: 60_000 });
    r.record(log("a"));
    r.record(log("b"));
    now += 100;
    const done = await r.finish({ status: "ok", result: { type: "number", preview: "1", json: 1 }, duration_ms: 3.5, output_bytes: 2 });
    expect(done).toMatchObject({ status: "ok", ended_at: new Date(now).toISOString(), result: { json: 1 }, metrics: { duration_ms: 3.5, events: 2, output_bytes: 2 } });
    expect(Object.keys(done).at(-1)).toBe("metrics");
    expect(await getExecution(store, r.id)).toEqual(done);
    expect(await listEvents(store, r.id)).toEqual(r.events);
    expect(() => r.record(log("late"))).toThrow(/ended/);
  });

  it("follow hands over the backlog after afterSeq, then live events and the end, with no gap", async () => {
    const r = await ExecutionRecorder.start(store, clock, running());
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
        if (failNext && statements.every((s) => s.sql.startsWith("INSERT INTO execution_events"))) {
          failNext = false;
          throw new Error("disk full");
        }
        return store.batch(statements);
      },
    };
    const errors: unknown[] = [];
    const r = await ExecutionRecorder.start(flaky, clock, running(), { batchSize: 2, onWriteError: (e) => errors.push(e) });
    r.record(log("a"));
    r.record(log("b"));
    await tick(10);
    r.record(log("c"));
    await r.finish({ status: "ok", duration_ms: 1, output_bytes: 3 });
    expect(errors).toHaveLength(1);
    expect((await listEvents(store, r.id)).map((e) => e.payload.text)).toEqual(["a", "b", "c"]);
  });
});
