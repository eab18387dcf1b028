/**
 * Session service: timers in executions (an execution ends when its timers have run; their output
 * streams in order; what is pending at wall_ms is cleared with an event saying so), cancel of a
 * running execution (spinning, waiting on a timer, waiting on a host call) and restart of a
 * session. Order and state are asserted, never how long anything took.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentRuntime } from "../runtimes/service.ts";
import {
  awaitHold,
  createSession,
  expectError,
  expectOk,
  fetchesFrom,
  get,
  holdServer,
  MISSING_ID,
  post,
  repl,
  type Sessions,
  startSessions,
} from "./sessions-helpers.ts";

let s: Sessions;
beforeAll(async () => {
  s = await startSessions();
});
afterAll(() => s?.svc.stop());

type Event = { seq: number; type: string; payload: Record<string, unknown> };
const texts = (events: Event[]) => events.filter((e) => e.type === "console").map((e) => e.payload.text);

/** Polls until `check` returns a value (the service writes events in batches while code runs). */
async function until<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The session's running execution once it has produced `events` events (input_echo counts). */
const runningExecution = (sessionId: string, events = 1) =>
  until(async () => {
    const [latest] = expectOk(await get(s, `/executions?session_id=${sessionId}&limit=1`)) as { id: string; status: string }[];
    if (latest?.status !== "running") return undefined;
    const seen = expectOk(await get(s, `/executions/${latest.id}/events`)) as Event[];
    return seen.length >= events ? latest.id : undefined;
  }, `a running execution with ${events} events`);

describe("timers in executions", () => {
  it("an execution ends when its timers have run; their output follows the value, in due order", async () => {
    const { id } = await createSession(s);
    const e = expectOk(await repl(s, id, "setTimeout(() => console.log('b'), 40); setTimeout(() => console.log('a'), 10); 'sync'"), 201);
    expect(e.status).toBe("ok");
    expect(e.result).toMatchObject({ json: "sync" });
    expect(e.events.map((ev: Event) => ev.type)).toEqual(["input_echo", "value", "console", "console"]);
    expect(texts(e.events)).toEqual(["a", "b"]);
  });

  it("an awaited timer settles the execution; promises and intervals run to their end", async () => {
    const { id } = await createSession(s);
    const e = expectOk(
      await repl(
        s,
        id,
        `let n = 0; const i = setInterval(() => { console.log('tick ' + ++n); if (n === 3) clearInterval(i); }, 5);
         await new Promise((resolve) => setTimeout(resolve, 30)); 'awaited'`,
      ),
      201,
    );
    expect(e.status, JSON.stringify(e.events)).toBe("ok");
    expect(e.result.json).toBe("awaited");
    expect(texts(e.events)).toEqual(["tick 1", "tick 2", "tick 3"]);
  });

  it("timer output streams while the execution runs", async () => {
    const { id } = await createSession(s);
    const running = repl(s, id, "let n = 0; setInterval(() => console.log('tick ' + ++n), 10)");
    const executionId = await runningExecution(id, 3); // input_echo, value, the first tick: while it still runs
    const cancelled = expectOk(await post(s, `/executions/${executionId}/cancel`));
    expect(cancelled.status).toBe("cancelled");
    const e = expectOk(await running, 201);
    expect(e.status).toBe("cancelled");
    const ticks = texts(e.events) as string[];
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks).toEqual(ticks.map((_, i) => `tick ${i + 1}`));
    expect(e.events.at(-1)).toMatchObject({ type: "system", payload: { message: "execution cancelled; 1 pending timer cleared", level: "warn" } });
  });

  it("an interval still pending at wall_ms is cleared, with a closing event saying so", async () => {
    const { id } = await createSession(s, { settings: { limits: { wall_ms: 300 } } });
    const e = expectOk(await repl(s, id, "setInterval(() => console.log('t'), 20); 'started'"), 201);
    expect(e.status).toBe("timeout");
    expect(e.events[1]).toMatchObject({ type: "value", payload: { json: "started" } });
    const last = e.events.at(-1);
    expect(last).toMatchObject({ type: "system", payload: { level: "error" } });
    expect(last.payload.message).toBe("execution timed out (wall_ms limit of 300 ms); 1 pending timer cleared");
    expect(e.error.message).toBe(last.payload.message);
    // Nothing of it runs later.
    const next = expectOk(await repl(s, id, "'next'"), 201);
    expect(next.events.map((ev: Event) => ev.type)).toEqual(["input_echo", "value"]);
  });

  it("more pending timers than the limit (1000) are refused with a RangeError", async () => {
    const { id } = await createSession(s);
    const e = expectOk(await repl(s, id, "for (let i = 0; i < 1001; i++) setTimeout(() => {}, 60000)"), 201);
    expect(e.status).toBe("error");
    expect(e.error.message).toBe("setTimeout: too many pending timers (the limit is 1000)");
    expect(e.events.at(-1)).toMatchObject({ type: "system", payload: { message: "1000 pending timers cleared" } });
  });
});

describe("what an execution leaves", () => {
  it("a host call it did not await and its queued jobs never reach the next execution (it ended with a throw)", async () => {
    const hold = await holdServer();
    try {
      const { id } = await createSession(s, fetchesFrom(hold));
      const thrown = expectOk(
        await repl(
          s,
          id,
          `require("http").fetch(${JSON.stringify(hold.url)}).then(() => console.log("late")); ` +
            `Promise.resolve().then(() => console.log("job")); throw new Error("A")`,
        ),
        201,
      );
      expect(thrown.status).toBe("error");
      // Answered now: the first execution's request too, if it was still made.
      hold.release("answer");
      const e = expectOk(await repl(s, id, awaitHold(hold)), 201);
      expect(e).toMatchObject({ status: "ok", result: { json: "answer" } });
      expect([...texts(thrown.events), ...texts(e.events)]).toEqual([]);
    } finally {
      hold.release();
      await hold.close();
    }
  });
});

describe("POST /executions/{id}/cancel", () => {
  const expectCancelled = async (sessionId: string, executionId: string, running: Promise<unknown>) => {
    const cancelled = expectOk(await post(s, `/executions/${executionId}/cancel`));
    expect(cancelled).toMatchObject({ id: executionId, status: "cancelled" });
    const e = expectOk(await running as never, 201) as { status: string; events: Event[] };
    expect(e.status).toBe("cancelled");
    expect(e.events.at(-1)).toMatchObject({ type: "system", payload: { message: expect.stringMatching(/^execution cancelled/) } });
    expect(expectOk(await get(s, `/executions/${executionId}/events`)).at(-1)).toEqual(e.events.at(-1));
    // The session stays usable, with its state.
    expect(expectOk(await repl(s, sessionId, "typeof kept"), 201).result.json).toBe("string");
    expect(expectOk(await get(s, `/sessions/${sessionId}`)).status).toBe("ready");
  };

  it.skipIf(currentRuntime() === "workerd")("ends an execution whose code spins", async () => {
    const { id } = await createSession(s, { settings: { limits: { cpu_ms: 60_000, wall_ms: 60_000 } } });
    expectOk(await repl(s, id, "var kept = 'yes'"), 201);
    const running = repl(s, id, "console.log('spinning'); for (;;) {}");
    await expectCancelled(id, await runningExecution(id, 2), running);
  });

  it("ends an execution waiting on a timer", async () => {
    const { id } = await createSession(s, { settings: { limits: { wall_ms: 60_000 } } });
    expectOk(await repl(s, id, "var kept = 'yes'"), 201);
    const running = repl(s, id, "console.log('waiting'); await new Promise((r) => setTimeout(r, 50_000))");
    await expectCancelled(id, await runningExecution(id, 2), running);
  });

  it("ends an execution waiting on a host call (http)", async () => {
    const hold = await holdServer();
    try {
      const { id } = await createSession(s, { ...fetchesFrom(hold), settings: { limits: { wall_ms: 60_000 } } });
      expectOk(await repl(s, id, "var kept = 'yes'"), 201);
      const running = repl(s, id, awaitHold(hold));
      await hold.arrived();
      await expectCancelled(id, await runningExecution(id, 1), running);
      // The host's request is aborted, not left to run to its own timeout.
      await until(async () => (hold.abandoned() === 1 ? true : undefined), "the held request to be abandoned");
    } finally {
      hold.release();
      await hold.close();
    }
  });

  it("409 EXECUTION_NOT_RUNNING for a finished execution, 404 for an unknown one", async () => {
    const { id } = await createSession(s);
    const done = expectOk(await repl(s, id, "1 + 1"), 201);
    const err = expectError(await post(s, `/executions/${done.id}/cancel`), 409, "EXECUTION_NOT_RUNNING");
    expect(err.details).toEqual({ execution_id: done.id, status: "ok" });
    expect(expectOk(await get(s, `/executions/${done.id}`)).status).toBe("ok");
    expectError(await post(s, `/executions/${MISSING_ID}/cancel`), 404, "EXECUTION_NOT_FOUND");
  });
});

describe("POST /sessions/{id}/restart", () => {
  it("gives a fresh global scope and runs the startup files again; keeps the id, executions and worktree", async () => {
    const session = await createSession(s, { startupFiles: [{ path: "boot.js" }] }, {
      "boot.js": "globalThis.boots = (globalThis.boots ?? 0) + 1; var fromStartup = 'here';",
    });
    const before = expectOk(await repl(s, session.id, "var mine = 42; [boots, fromStartup, mine]"), 201);
    expect(before.result.json).toEqual([1, "here", 42]);
    const restarted = expectOk(await post(s, `/sessions/${session.id}/restart`));
    expect(restarted).toMatchObject({ id: session.id, status: "ready", worktree_path: expect.any(String) });
    const after = expectOk(await repl(s, session.id, "[boots, fromStartup, typeof mine]"), 201);
    expect(after.result.json).toEqual([1, "here", "undefined"]);
    const ids = (expectOk(await get(s, `/executions?session_id=${session.id}`)) as { id: string }[]).map((e) => e.id);
    expect(ids).toEqual([after.id, before.id]);
    expect(expectOk(await get(s, `/executions/${before.id}`)).result.json).toEqual([1, "here", 42]);
  });

  it("409 SESSION_BUSY while an execution runs; SESSION_NOT_READY once closed; 404 for an unknown one", async () => {
    const { id } = await createSession(s, { settings: { limits: { wall_ms: 60_000 } } });
    const running = repl(s, id, "console.log('waiting'); await new Promise((r) => setTimeout(r, 50_000))");
    const executionId = await runningExecution(id, 2);
    expectError(await post(s, `/sessions/${id}/restart`), 409, "SESSION_BUSY");
    expectOk(await post(s, `/executions/${executionId}/cancel`));
    await running;
    expectOk(await post(s, `/sessions/${id}/close`));
    expectError(await post(s, `/sessions/${id}/restart`), 409, "SESSION_NOT_READY");
    expectError(await post(s, `/sessions/${MISSING_ID}/restart`), 404, "SESSION_NOT_FOUND");
  });
});
