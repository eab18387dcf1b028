/**
 * Session service: a live session left idle keeps its sandbox. On workerd a Durable Object with
 * no request in flight is evicted after about 10 s (its isolate may go with it), and the service
 * object that holds the rows would start again and close what it finds live as if the daemon had
 * restarted; the session must instead keep its state and run the next input. Node and Deno run
 * the same steps (their runtimes live in the process, so a short pause shows the same contract).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentRuntime } from "../runtimes/service.ts";
import { createSession, expectOk, get, repl, type Sessions, startSessions } from "./sessions-helpers.ts";

/** Longer than workerd's eviction window for an idle Durable Object (10 s, checked every few s). */
const IDLE_MS = currentRuntime() === "workerd" ? Number(process.env.TEST_IDLE_MS ?? 16_000) : 500;

let s: Sessions;
beforeAll(async () => {
  s = await startSessions();
});
afterAll(() => s?.svc.stop());

describe("an idle live session", () => {
  it(`keeps its state and runs the next input after ${IDLE_MS} ms without requests`, { timeout: IDLE_MS + 30_000 }, async () => {
    const session = await createSession(s);
    expect(expectOk(await repl(s, session.id, "globalThis.kept = 41; kept"), 201).result.json).toBe(41);

    await new Promise((r) => setTimeout(r, IDLE_MS));

    const next = expectOk(await repl(s, session.id, "kept + 1"), 201);
    expect(next.status).toBe("ok");
    expect(next.result.json).toBe(42);
    const record = expectOk(await get(s, `/sessions/${session.id}`));
    expect(record.status).toBe("ready");
    expect(record.last_error ?? null).toBeNull();
    expect(s.svc.output()).not.toMatch(/previous run left alive/);
  });
});
