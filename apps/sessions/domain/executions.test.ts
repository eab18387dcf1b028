import { createClient } from "@libsql/client";
import { beforeEach, describe, expect, it } from "vitest";
import { libsqlStore } from "#lib/db/libsql";
import { applyMigrations } from "#lib/db";
import { memoryFileTree } from "#lib/files";
import { createLogger } from "#lib/log";
import { type ExecutionOutcome, type ExecutionRequest, type LiveEvent, LiveRuntimeError, type LiveRuntimes, MODULE_CATALOG } from "../live/types.ts";
import { getExecution, listEvents } from "../store/executions.ts";
import { SESSION_MIGRATIONS } from "../store/migrations.ts";
import type { ServiceContext } from "./context.ts";
import { SessionServiceError } from "./errors.ts";
import { runExecution } from "./executions.ts";
import { closeSession, createSession, requireSession, runtimesLost } from "./sessions.ts";
import { createTemplate } from "./templates.ts";

/** A LiveRuntimes whose executions the test scripts: each call waits for `next` to be settled. */
function scriptedLive() {
  const live = new Set<string>();
  const calls: ExecutionRequest[] = [];
  let step: (onEvent: (e: LiveEvent) => void) => Promise<ExecutionOutcome> = async () => outcome("ok");
  const runtimes: LiveRuntimes = {
    async open(spec) {
      live.add(spec.sessionId);
    },
    async execute(sessionId, request, onEvent) {
      if (!live.has(sessionId)) throw new LiveRuntimeError("SESSION_NOT_LIVE", "not live");
      calls.push(request);
      onEvent({ type: "input_echo", payload: { text: request.kind === "repl" ? request.input : request.path } });
      return step(onEvent);
    },
    cancel: async () => false,
    async close(id) {
      live.delete(id);
    },
    liveIds: () => [...live],
    async shutdown() {
      live.clear();
    },
  };
  return { runtimes, calls, live, script: (fn: typeof step) => (step = fn) };
}

const outcome = (status: ExecutionOutcome["status"], extra: Partial<ExecutionOutcome> = {}): ExecutionOutcome => ({
  status,
  metrics: { duration_ms: 1, events: 1, output_bytes: 0 },
  ...extra,
});

let ctx: ServiceContext;
let fake: ReturnType<typeof scriptedLive>;
let sessionId: string;

beforeEach(async () => {
  fake = scriptedLive();
  const store = libsqlStore(createClient({ url: ":memory:" }));
  await applyMigrations(store, SESSION_MIGRATIONS);
  const files = memoryFileTree({ "work/tree/main.js": "1" });
  ctx = {
    store,
    live: fake.runtimes,
    worktrees: files,
    worktreeUploads: false,
    libraries: { tree: files, root: "/libraries" },
    modules: MODULE_CATALOG,
    clock: Date.now,
    newId: () => crypto.randomUUID(),
    logger: createLogger({ level: "silent" }),
    liveSessions: new Map(),
    busy: new Set(),
    recorders: new Map(),
    stopping: false,
  };
  const template = await createTemplate(ctx, { name: "t" });
  sessionId = (await createSession(ctx, { template_id: template.id, workspace_id: "w", base_commit_oid: "c", worktree_path: "/work/tree" })).id;
});

const codeOf = (p: Promise<unknown>) => p.then(() => "resolved", (err: SessionServiceError) => err.code);

describe("runExecution", () => {
  it("claims the session synchronously: of two requests at once exactly one reaches the runtime", async () => {
    let release!: () => void;
    const running = new Promise<void>((started) =>
      fake.script(() => {
        started();
        return new Promise((resolve) => (release = () => resolve(outcome("ok"))));
      })
    );
    const first = runExecution(ctx, { kind: "repl", session_id: sessionId, input: "a" });
    const second = runExecution(ctx, { kind: "repl", session_id: sessionId, input: "b" });
    expect(await codeOf(second)).toBe("SESSION_BUSY");
    await running;
    release();
    expect((await first).execution.status).toBe("ok");
    expect(fake.calls).toHaveLength(1);
    expect(ctx.busy.size).toBe(0);
  });

  it("reads a run-file source through the worktree and stores args and env", async () => {
    const { execution } = await runExecution(ctx, { kind: "run_file", session_id: sessionId, path: "./main.js", args: { a: 1 }, env: { B: "2" } });
    expect(fake.calls[0]).toEqual({ kind: "run_file", path: "main.js", source: "1", args: { a: 1 }, env: { B: "2" } });
    expect(await getExecution(ctx.store, execution.id)).toMatchObject({ kind: "run_file", path: "main.js", args: { a: 1 }, env: { B: "2" } });
  });

  it("adds the timeout's system event when the runtime had no room for it", async () => {
    fake.script(async () => outcome("timeout", { limit: "cpu_ms" }));
    const { execution, events } = await runExecution(ctx, { kind: "repl", session_id: sessionId, input: "x" });
    expect(events.map((e) => e.type)).toEqual(["input_echo", "system"]);
    expect(events[1]!.payload).toMatchObject({ level: "error" });
    expect(execution).toMatchObject({ status: "timeout", error: { limit: "cpu_ms" }, metrics: { events: 2 } });
  });

  it("a limit breach is OUTPUT_LIMIT_EXCEEDED naming the stored execution", async () => {
    fake.script(async (emit) => {
      emit({ type: "console", payload: { level: "log", text: "x" } });
      return outcome("limit_exceeded", { limit: "max_output_kb" });
    });
    const err = await runExecution(ctx, { kind: "repl", session_id: sessionId, input: "x" }).catch((e: SessionServiceError) => e);
    expect(err).toMatchObject({ code: "OUTPUT_LIMIT_EXCEEDED", details: { limit: "max_output_kb" } });
    const id = (err as SessionServiceError).details!.execution_id as string;
    expect(await getExecution(ctx.store, id)).toMatchObject({ status: "limit_exceeded", metrics: { events: 2 } });
    expect(await listEvents(ctx.store, id)).toHaveLength(2);
  });

  it("a runtime lost under the execution: stored as error with a system event, the session crashed", async () => {
    fake.script(async () => {
      throw new LiveRuntimeError("RUNTIME_LOST", "thread crashed");
    });
    const { execution, events } = await runExecution(ctx, { kind: "repl", session_id: sessionId, input: "x" });
    expect(execution).toMatchObject({ status: "error", error: { message: "runtime lost: thread crashed" } });
    expect(events.at(-1)).toMatchObject({ seq: 2, type: "system", payload: { level: "error" } });
    expect(await requireSession(ctx, sessionId)).toMatchObject({ status: "crashed", last_error: "runtime lost: thread crashed" });
    expect(await codeOf(runExecution(ctx, { kind: "repl", session_id: sessionId, input: "y" }))).toBe("SESSION_NOT_READY");
  });

  it("a ready row without a live runtime: SESSION_NOT_READY, the execution stored as error, the session crashed", async () => {
    fake.live.clear();
    const err = await runExecution(ctx, { kind: "repl", session_id: sessionId, input: "x" }).catch((e: SessionServiceError) => e);
    expect(err).toMatchObject({ code: "SESSION_NOT_READY", details: { execution_id: expect.any(String) } });
    expect(await getExecution(ctx.store, (err as SessionServiceError).details!.execution_id as string)).toMatchObject({ status: "error" });
    expect((await requireSession(ctx, sessionId)).status).toBe("crashed");
  });

  it("a short REPL execution costs one write batch and no read: the session comes from memory", async () => {
    const calls: string[] = [];
    const store = ctx.store;
    ctx.store = {
      query: (sql, args) => (calls.push("query"), store.query(sql, args)),
      execute: (sql, args) => (calls.push("execute"), store.execute(sql, args)),
      batch: (statements) => (calls.push(`batch of ${statements.length}`), store.batch(statements)),
      close: () => store.close(),
    };
    const { execution, events } = await runExecution(ctx, { kind: "repl", session_id: sessionId, input: "x" });
    expect(calls).toEqual(["batch of 2"]); // the final row, and one INSERT of all its events
    expect(await getExecution(store, execution.id)).toEqual(execution);
    expect(await listEvents(store, execution.id)).toEqual(events);
  });

  it("a closed or crashed session leaves memory: its stored state answers", async () => {
    expect(ctx.liveSessions.has(sessionId)).toBe(true);
    await closeSession(ctx, sessionId);
    expect(ctx.liveSessions.has(sessionId)).toBe(false);
    expect(await codeOf(runExecution(ctx, { kind: "repl", session_id: sessionId, input: "x" }))).toBe("SESSION_NOT_READY");

    const template = await createTemplate(ctx, { name: "t2" });
    const other = (await createSession(ctx, { template_id: template.id, workspace_id: "w", base_commit_oid: "c", worktree_path: "/work/tree" })).id;
    await runtimesLost(ctx, [other], "thread exited");
    expect(ctx.liveSessions.has(other)).toBe(false);
    expect(await requireSession(ctx, other)).toMatchObject({ status: "crashed", last_error: "runtime lost: thread exited" });
  });

  it("refuses bad paths before anything is stored or run", async () => {
    expect(await codeOf(runExecution(ctx, { kind: "run_file", session_id: sessionId, path: "../x.js", args: {}, env: {} }))).toBe("INVALID_PATH");
    expect(await codeOf(runExecution(ctx, { kind: "run_file", session_id: sessionId, path: "nope.js", args: {}, env: {} }))).toBe("FILE_NOT_FOUND");
    expect(fake.calls).toEqual([]);
    expect(await ctx.store.query("SELECT id FROM executions")).toEqual([]);
    expect(ctx.busy.size).toBe(0);
  });
});
