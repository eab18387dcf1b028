/**
 * Session service: a restart, after a crash (SIGKILL: no shutdown hooks) and after a graceful
 * stop (SIGTERM), while one execution runs. The service starts again on the same storage: an
 * embedded `file:` database on Node and Deno, the same `--persist-to` state (Durable Object
 * SQLite and R2) on workerd.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { currentRuntime } from "../runtimes/service.ts";
import { awaitHold, createSession, expectOk, fetchesFrom, get, holdServer, post, repl, RFC3339_MS, type Sessions, startSessions } from "./sessions-helpers.ts";

let current: Sessions | undefined;
afterAll(() => current?.svc.stop());

async function start(dir: string): Promise<Sessions> {
  current = currentRuntime() === "workerd"
    ? await startSessions({ persistTo: dir })
    : await startSessions({ args: ["--db", `file:${join(dir, "sessions.db")}`] });
  return current;
}

/** Polls until `check` holds (the service writes events in batches while code runs). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Sessions live and one execution running, then the process ends (`how`) and starts again on the
 * same storage: live sessions are closed with last_error, the running execution is an error with
 * a closing system event, everything else is as it was.
 */
async function restartScenario(how: "kill" | "stop"): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "sessions-restart-"));
  const hold = await holdServer();
  try {
    let s = await start(dir);
    const idle = await createSession(s, { settings: { limits: { cpu_ms: 1234 } } });
    const finished = expectOk(await repl(s, idle.id, "6 * 7"), 201);
    const closed = await createSession(s);
    const closedRecord = expectOk(await post(s, `/sessions/${closed.id}/close`));
    const busy = await createSession(s, fetchesFrom(hold));
    const running = repl(s, busy.id, `console.log('started'); ${awaitHold(hold)}`).catch(() => undefined);
    await hold.arrived(1);
    let executionId = "";
    await until(async () => {
      const [e] = expectOk(await get(s, `/executions?session_id=${busy.id}`));
      if (!e) return false;
      executionId = e.id;
      expect(e.status).toBe("running");
      return expectOk(await get(s, `/executions/${e.id}/events`)).length === 2;
    }, "the running execution's first events");

    await (how === "kill" ? s.svc.kill() : s.svc.stop());
    await running;
    s = await start(dir);

    for (const id of [idle.id, busy.id]) {
      const session = expectOk(await get(s, `/sessions/${id}`));
      expect(session.status).toBe("closed");
      expect(session.closed_at).toMatch(RFC3339_MS);
      expect(session.last_error).toMatch(/restart/);
    }
    expect(expectOk(await get(s, `/sessions/${closed.id}`))).toEqual(closedRecord);
    const summary = expectOk(await get(s, "/runtime/summary"));
    expect(summary).toEqual({ active_sessions: 0, active_session_ids: [] });

    const execution = expectOk(await get(s, `/executions/${executionId}`));
    expect(execution.status).toBe("error");
    expect(execution.ended_at).toMatch(RFC3339_MS);
    // A graceful stop on Node and Deno ends the execution itself; otherwise (a crash, or workerd,
    // where wrangler's stop does not reach the object) the next start's recovery does.
    expect(execution.error.message).toMatch(how === "stop" && currentRuntime() !== "workerd" ? /shut down/ : /restart/);
    const events = expectOk(await get(s, `/executions/${executionId}/events`));
    expect(events.map((e: { seq: number; type: string }) => [e.seq, e.type])).toEqual([[1, "input_echo"], [2, "console"], [3, "system"]]);
    expect(events[2].payload).toEqual({ level: "error", message: execution.error.message });
    expect(execution.metrics.events).toBe(3);

    const { events: _events, ...finishedRecord } = finished;
    expect(expectOk(await get(s, `/executions/${finished.id}`))).toEqual(finishedRecord);
    expect(expectOk(await get(s, `/templates/${idle.templateId}/settings`)).limits.cpu_ms).toBe(1234);
    expect(expectOk(await repl(s, busy.id, "1"), 409).error.code).toBe("SESSION_NOT_READY");

    // The restarted service works: a new session from the same template.
    const again = expectOk(
      await post(s, "/sessions", { template_id: idle.templateId, workspace_id: "w", base_commit_oid: "c", worktree_path: idle.worktree }),
      201,
    );
    expect(expectOk(await repl(s, again.id, "'after restart'"), 201).result.json).toBe("after restart");
  } finally {
    await hold.close();
    await current?.svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

describe("restart recovery", () => {
  it("after a crash (SIGKILL): live sessions closed with last_error, the running execution an error with a system event", () => restartScenario("kill"));

  it("after a graceful stop (SIGTERM): the same", () => restartScenario("stop"));
});
