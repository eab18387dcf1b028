/**
 * Session service: executions (REPL and run-file), their events, the limit outcomes, path
 * safety, SESSION_BUSY, and the execution and event listings with their query validation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addFiles,
  awaitHold,
  createSession,
  escapeRoute,
  expectError,
  expectOk,
  fetchesFrom,
  get,
  type HoldServer,
  holdServer,
  MISSING_ID,
  post,
  repl,
  RFC3339_MS,
  SECRET,
  type Sessions,
  startSessions,
  UUID,
} from "./sessions-helpers.ts";

let s: Sessions;
beforeAll(async () => {
  s = await startSessions();
});
afterAll(() => s?.svc.stop());

const executionIds = async (sessionId: string) =>
  (expectOk(await get(s, `/executions?session_id=${sessionId}&limit=1000`)) as { id: string }[]).map((e) => e.id);
const runFile = (session_id: string, body: Record<string, unknown>) => post(s, "/executions/run-file", { session_id, ...body });

describe("REPL executions", () => {
  it("POST /executions/repl: 201, the execution with its events (input_echo, console, value)", async () => {
    const { id: sessionId } = await createSession(s);
    const input = "const x = 20; console.log('x is', x, {a: 1}); x * 2";
    const res = await repl(s, sessionId, input);
    const e = expectOk(res, 201);
    expect(Object.keys(e)).toEqual(["id", "session_id", "kind", "input", "args", "env", "status", "started_at", "ended_at", "result", "metrics", "events"]);
    expect(e).toMatchObject({ id: expect.stringMatching(UUID), session_id: sessionId, kind: "repl", input, args: {}, env: {}, status: "ok" });
    expect(e.started_at).toMatch(RFC3339_MS);
    expect(e.ended_at).toMatch(RFC3339_MS);
    expect(e.ended_at >= e.started_at).toBe(true);
    expect(e.result).toEqual({ type: "number", preview: "40", json: 40 });
    expect(e.events.map((ev: { seq: number; type: string }) => [ev.seq, ev.type])).toEqual([[1, "input_echo"], [2, "console"], [3, "value"]]);
    for (const ev of e.events) {
      expect(Object.keys(ev)).toEqual(["execution_id", "seq", "ts", "type", "payload"]);
      expect(ev.execution_id).toBe(e.id);
      expect(ev.ts).toMatch(RFC3339_MS);
    }
    expect(e.events[0].payload).toEqual({ text: input });
    expect(e.events[1].payload).toEqual({ level: "log", text: "x is 20 { a: 1 }" });
    expect(e.events[2].payload).toEqual({ type: "number", preview: "40", json: 40 });
    expect(e.metrics).toEqual({ duration_ms: expect.any(Number), events: 3, output_bytes: expect.any(Number) });
    const { events, ...stored } = e;
    expect(expectOk(await get(s, `/executions/${e.id}`))).toEqual(stored);
    expect(expectOk(await get(s, `/executions/${e.id}/events`))).toEqual(events);
  });

  it("keeps state across executions in the session's global scope", async () => {
    const { id } = await createSession(s);
    expectOk(await repl(s, id, "var a = 1; let b = 2; function sum() { return a + b + c; }"), 201);
    expectOk(await repl(s, id, "const c = 3; a = 10;"), 201);
    expect(expectOk(await repl(s, id, "sum()"), 201).result.json).toBe(15);
  });

  it("a throw is 201 with status error, an exception event, and the session stays usable", async () => {
    const { id } = await createSession(s);
    const e = expectOk(await repl(s, id, "null.prop"), 201);
    expect(e.status).toBe("error");
    expect(e.error).toEqual({ message: expect.stringContaining("null"), stack: expect.stringContaining("TypeError") });
    expect(e.result).toBeUndefined();
    const exception = e.events.at(-1);
    expect(exception.type).toBe("exception");
    expect(exception.payload).toEqual({ message: e.error.message, stack: e.error.stack });
    expect(expectOk(await repl(s, id, "'still here'"), 201).result.json).toBe("still here");
  });

  it("captures every console level and reports value types", async () => {
    const { id } = await createSession(s);
    const e = expectOk(await repl(s, id, "for (const l of ['log','info','warn','error','debug']) console[l](l, 1); [1, 'two']"), 201);
    const consoles = e.events.filter((ev: { type: string }) => ev.type === "console").map((ev: { payload: unknown }) => ev.payload);
    expect(consoles).toEqual(["log", "info", "warn", "error", "debug"].map((level) => ({ level, text: `${level} 1` })));
    expect(e.result).toEqual({ type: "array", preview: "[ 1, 'two' ]", json: [1, "two"] });
    expect(expectOk(await repl(s, id, "undefined"), 201).result).toMatchObject({ type: "undefined" });
    expect(expectOk(await repl(s, id, "({k: 'v'})"), 201).result).toEqual({ type: "object", preview: "{ k: 'v' }", json: { k: "v" } });
  });

  it("bad requests are 400/404 and store nothing", async () => {
    const { id } = await createSession(s);
    expectError(await repl(s, MISSING_ID, "1"), 404, "SESSION_NOT_FOUND");
    expectError(await post(s, "/executions/repl", { session_id: "abc", input: "1" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, "/executions/repl", { session_id: id }), 400, "VALIDATION_ERROR");
    expectError(await post(s, "/executions/repl", { session_id: id, input: 1 }), 400, "VALIDATION_ERROR");
    expectError(await post(s, "/executions/repl", { session_id: id, input: "1", timeout: 5 }), 400, "INVALID_REQUEST");
    expectError(await post(s, "/executions/repl", `{"session_id": "${id}", "input": }`), 400, "INVALID_REQUEST");
    expect(await executionIds(id)).toEqual([]);
  });
});

describe("run-file executions", () => {
  it("runs a worktree file with args and env visible to the script", async () => {
    const { id, worktree } = await createSession(s, {}, { "scripts/main.js": "console.log(JSON.stringify(args), env.GREETING, typeof env.PATH); args.n * 2" });
    const res = await runFile(id, { path: "scripts/main.js", args: { n: 21, list: [1] }, env: { GREETING: "hi" } });
    const e = expectOk(res, 201);
    expect(e).toMatchObject({ session_id: id, kind: "run_file", path: "scripts/main.js", args: { n: 21, list: [1] }, env: { GREETING: "hi" }, status: "ok" });
    expect(e.input).toBeUndefined();
    expect(e.events).toBeUndefined();
    const events = expectOk(await get(s, `/executions/${e.id}/events`));
    expect(events[0]).toMatchObject({ seq: 1, type: "input_echo", payload: { path: "scripts/main.js" } });
    expect(events[1]).toMatchObject({ seq: 2, type: "console", payload: { level: "log", text: '{"n":21,"list":[1]} hi undefined' } });
    // The file's completion value, as a REPL input's: the result and a value event.
    expect(e.result).toEqual({ type: "number", preview: "42", json: 42 });
    expect(events[2]).toMatchObject({ seq: 3, type: "value", payload: { type: "number", preview: "42", json: 42 } });
    expect(events).toHaveLength(3);
    // args and env default to {} and are only visible to that run
    await addFiles(s, worktree, { "plain.js": "console.log(JSON.stringify([args, env]))" });
    const plain = expectOk(await runFile(id, { path: "./plain.js" }), 201);
    expect(plain).toMatchObject({ path: "plain.js", args: {}, env: {} });
    expect((await get(s, `/executions/${plain.id}/events`)).body[1].payload.text).toBe("[{},{}]");
  });

  it("absolute paths, .. and percent-encoded dots are 422 INVALID_PATH before anything runs or is stored", async () => {
    const { id, worktree } = await createSession(s, {}, { "ok.js": "console.log('ran')" });
    for (const path of [`${worktree}/ok.js`, "/etc/passwd", "../ok.js", "a/../../ok.js", "%2e%2e/ok.js", "%2E%2E%2Fok.js", "%252e%252e/ok.js", "..\\ok.js"]) {
      const err = expectError(await runFile(id, { path }), 422, "INVALID_PATH");
      expect(err.details).toEqual({ path });
    }
    expect(await executionIds(id)).toEqual([]);
  });

  it("a symlink that leaves the worktree is 422 INVALID_PATH; the file outside is never read", async () => {
    const { id, worktree } = await createSession(s);
    const path = await escapeRoute(s, worktree, "link.js");
    const res = await runFile(id, { path });
    expectError(res, 422, "INVALID_PATH");
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    expect(await executionIds(id)).toEqual([]);
  });

  it("a missing file or a directory is 404 FILE_NOT_FOUND, nothing stored", async () => {
    const { id } = await createSession(s, {}, { "dir/inner.js": "1" });
    expect(expectError(await runFile(id, { path: "nope.js" }), 404, "FILE_NOT_FOUND").details).toEqual({ path: "nope.js" });
    expectError(await runFile(id, { path: "dir" }), 404, "FILE_NOT_FOUND");
    expect(await executionIds(id)).toEqual([]);
  });

  it("bad bodies are 400", async () => {
    const { id } = await createSession(s, {}, { "a.js": "1" });
    expectError(await runFile(id, {}), 400, "VALIDATION_ERROR");
    expectError(await runFile(id, { path: "a.js", args: [1] }), 400, "VALIDATION_ERROR");
    expectError(await runFile(id, { path: "a.js", env: "X=1" }), 400, "VALIDATION_ERROR");
    expectError(await runFile(id, { path: "a.js", argv: [] }), 400, "INVALID_REQUEST");
    expect(await executionIds(id)).toEqual([]);
  });
});

describe("limits", () => {
  it("cpu_ms: 201 with status timeout and a closing system event (level error); the session stays usable", async () => {
    const { id } = await createSession(s, { settings: { limits: { cpu_ms: 200 } } });
    const e = expectOk(await repl(s, id, "console.log('spinning'); while (true) {}"), 201);
    expect(e.status).toBe("timeout");
    expect(e.error).toMatchObject({ limit: "cpu_ms", message: expect.stringContaining("cpu_ms") });
    const last = e.events.at(-1);
    expect(last).toMatchObject({ type: "system", payload: { level: "error", message: expect.stringContaining("cpu_ms") } });
    expect(e.events.map((ev: { seq: number }) => ev.seq)).toEqual(e.events.map((_: unknown, i: number) => i + 1));
    expect(expectOk(await get(s, `/executions/${e.id}`)).status).toBe("timeout");
    expect(expectOk(await repl(s, id, "1 + 1"), 201).result.json).toBe(2);
  });

  it("an output flood: 422 OUTPUT_LIMIT_EXCEEDED; stored as limit_exceeded with the events up to the limit", async () => {
    const { id } = await createSession(s, { settings: { limits: { max_output_kb: 1 } } });
    const err = expectError(await repl(s, id, "for (;;) console.log('x'.repeat(100))"), 422, "OUTPUT_LIMIT_EXCEEDED");
    const executionId = err.details?.execution_id as string;
    expect(executionId).toMatch(UUID);
    expect(err.details?.limit).toBe("max_output_kb");
    const stored = expectOk(await get(s, `/executions/${executionId}`));
    expect(stored).toMatchObject({ status: "limit_exceeded", error: { limit: "max_output_kb" } });
    const events = expectOk(await get(s, `/executions/${executionId}/events`));
    const consoles = events.filter((ev: { type: string }) => ev.type === "console");
    const bytes = consoles.reduce((n: number, ev: { payload: { text: string } }) => n + new TextEncoder().encode(ev.payload.text).length, 0);
    expect(consoles.length).toBeGreaterThan(1);
    expect(bytes).toBeLessThanOrEqual(1024);
    expect(bytes).toBeGreaterThan(1024 - 100);
    expect(stored.metrics.events).toBe(events.length);
    expect(events.map((ev: { seq: number }) => ev.seq)).toEqual(events.map((_: unknown, i: number) => i + 1));
    expect(expectOk(await repl(s, id, "'usable'"), 201).result.json).toBe("usable");
  });

  it("an event flood: 422 OUTPUT_LIMIT_EXCEEDED; exactly max_events events stored", async () => {
    const { id } = await createSession(s, { settings: { limits: { max_events: 5 } } });
    const err = expectError(await repl(s, id, "for (let i = 0; ; i++) console.log(i)"), 422, "OUTPUT_LIMIT_EXCEEDED");
    expect(err.details?.limit).toBe("max_events");
    const events = expectOk(await get(s, `/executions/${err.details!.execution_id}/events`));
    expect(events.map((ev: { seq: number; type: string }) => [ev.seq, ev.type])).toEqual([
      [1, "input_echo"],
      [2, "console"],
      [3, "console"],
      [4, "console"],
      [5, "console"],
    ]);
    expect(expectOk(await get(s, `/executions/${err.details!.execution_id}`)).status).toBe("limit_exceeded");
  });
});

describe("one execution at a time", () => {
  let hold: HoldServer;
  beforeAll(async () => {
    hold = await holdServer();
  });
  afterAll(() => hold?.close());

  it("a second request while one runs is answered at once with 409 SESSION_BUSY", async () => {
    const { id } = await createSession(s, fetchesFrom(hold));
    const first = repl(s, id, awaitHold(hold));
    await hold.arrived(1);
    let firstDone = false;
    void first.then(() => (firstDone = true));
    const err = expectError(await repl(s, id, "1"), 409, "SESSION_BUSY");
    expect(err.message).toContain(id);
    expect(firstDone).toBe(false);
    expect(expectOk(await get(s, `/sessions/${id}`)).status).toBe("ready");
    hold.release("answer");
    const e = expectOk(await first, 201);
    expect(e.result.json).toBe("answer");
    expect(await executionIds(id)).toEqual([e.id]);
    expect(expectOk(await repl(s, id, "2"), 201).status).toBe("ok");
  });

  it("closing the session under a running execution ends it as error with a system event; the session is closed", async () => {
    const hold2 = await holdServer();
    try {
      const { id } = await createSession(s, fetchesFrom(hold2));
      const running = repl(s, id, awaitHold(hold2));
      await hold2.arrived(1);
      expect(expectOk(await post(s, `/sessions/${id}/close`)).status).toBe("closed");
      const e = expectOk(await running, 201);
      expect(e.status).toBe("error");
      expect(e.events.at(-1)).toMatchObject({ type: "system", payload: { level: "error", message: expect.stringContaining("closed") } });
      expect(expectOk(await get(s, `/executions/${e.id}`)).status).toBe("error");
      expect(expectOk(await get(s, `/sessions/${id}`))).toMatchObject({ status: "closed" });
    } finally {
      await hold2.close();
    }
  });

  it("two executions sent at once: exactly one runs, the other gets 409 SESSION_BUSY", async () => {
    const hold2 = await holdServer();
    try {
      const { id } = await createSession(s, fetchesFrom(hold2));
      const both = [repl(s, id, awaitHold(hold2)), repl(s, id, awaitHold(hold2))];
      const refused = await Promise.race(both);
      expectError(refused, 409, "SESSION_BUSY");
      await hold2.arrived(1);
      hold2.release("once");
      const results = await Promise.all(both);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      const ran = results.find((r) => r.status === 201)!.body;
      expect(ran.result.json).toBe("once");
      expect(hold2.count()).toBe(1);
      expect(await executionIds(id)).toEqual([ran.id]);
    } finally {
      await hold2.close();
    }
  });
});

describe("listing executions and events", () => {
  it("GET /executions?session_id= is a bare array, newest first, 50 by default, `limit` at most", async () => {
    const { id } = await createSession(s);
    const ids: string[] = [];
    for (let i = 0; i < 52; i++) ids.push(expectOk(await repl(s, id, String(i)), 201).id);
    const page = expectOk(await get(s, `/executions?session_id=${id}`));
    expect(page).toHaveLength(50);
    expect(page.map((e: { id: string }) => e.id)).toEqual(ids.slice(2).reverse());
    expect(page[0].events).toBeUndefined();
    expect(expectOk(await get(s, `/executions?session_id=${id}&limit=2`)).map((e: { id: string }) => e.id)).toEqual([ids[51], ids[50]]);
    expect(expectOk(await get(s, `/executions?session_id=${id}&limit=500`))).toHaveLength(52);
    const other = await createSession(s);
    expect(expectOk(await get(s, `/executions?session_id=${other.id}`))).toEqual([]);
  });

  it("query validation: 400 VALIDATION_ERROR for bad values, 400 INVALID_REQUEST for unknown parameters, 404 for an unknown session", async () => {
    const { id } = await createSession(s);
    for (const limit of ["0", "-1", "abc", "1.5", "", "1e3"]) {
      const err = expectError(await get(s, `/executions?session_id=${id}&limit=${limit}`), 400, "VALIDATION_ERROR");
      expect(err.details?.issues).toEqual([expect.objectContaining({ path: "limit" })]);
    }
    expectError(await get(s, "/executions"), 400, "VALIDATION_ERROR");
    expectError(await get(s, "/executions?session_id=not-a-uuid"), 400, "VALIDATION_ERROR");
    expectError(await get(s, `/executions?session_id=${id}&limit=1&limit=2`), 400, "VALIDATION_ERROR");
    expectError(await get(s, `/executions?session_id=${id}&page=2`), 400, "INVALID_REQUEST");
    expectError(await get(s, `/executions?session_id=${MISSING_ID}`), 404, "SESSION_NOT_FOUND");
  });

  it("GET /executions/{id}: 404 EXECUTION_NOT_FOUND for an unknown id, 400 for a malformed one", async () => {
    expectError(await get(s, `/executions/${MISSING_ID}`), 404, "EXECUTION_NOT_FOUND");
    expectError(await get(s, "/executions/xyz"), 400, "VALIDATION_ERROR");
    expectError(await get(s, `/executions/${MISSING_ID}/events`), 404, "EXECUTION_NOT_FOUND");
    expectError(await get(s, "/executions/xyz/events"), 400, "VALIDATION_ERROR");
  });

  it("GET /executions/{id}/events?after_seq= returns the events after it, in seq order", async () => {
    const { id } = await createSession(s);
    const e = expectOk(await repl(s, id, "console.log(1); console.log(2); console.log(3); 4"), 201);
    expect(e.events).toHaveLength(5);
    expect(expectOk(await get(s, `/executions/${e.id}/events`))).toEqual(e.events);
    expect(expectOk(await get(s, `/executions/${e.id}/events?after_seq=0`))).toEqual(e.events);
    expect(expectOk(await get(s, `/executions/${e.id}/events?after_seq=2`))).toEqual(e.events.slice(2));
    expect(expectOk(await get(s, `/executions/${e.id}/events?after_seq=5`))).toEqual([]);
    expect(expectOk(await get(s, `/executions/${e.id}/events?after_seq=99999999999999999999`))).toEqual([]);
    for (const bad of ["-1", "x", "1.5", ""]) expectError(await get(s, `/executions/${e.id}/events?after_seq=${bad}`), 400, "VALIDATION_ERROR");
    expectError(await get(s, `/executions/${e.id}/events?since=1`), 400, "INVALID_REQUEST");
  });
});
