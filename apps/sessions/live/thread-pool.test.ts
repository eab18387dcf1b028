import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryFileTree } from "#lib/files";
import type { ThreadPort } from "#lib/sandbox-host";
import { createNodeThreadRuntimes } from "./node-threads.ts";
import { serveSessionThread } from "./thread-host.ts";
import { createThreadRuntimes, type FromThread, type ToThread } from "./thread-pool.ts";
import { collect, hasSettled, repl, runFile, sessionSpec, type SpecOverrides, timerTicks } from "./testing.ts";
import type { LiveEvent, LiveRuntimes } from "./types.ts";

describe("thread pool on Node worker threads", () => {
  let pool: LiveRuntimes;
  let dir: string;
  const lost: [string[], string][] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "pool-"));
    await writeFile(join(dir, "util.js"), "exports.answer = 42;");
    pool = createNodeThreadRuntimes({ threads: 2, graceMs: 300, hostEnv: { APP_X: "1" }, onLost: (ids, why) => lost.push([ids, why]) });
  });
  afterAll(async () => {
    await pool.shutdown();
    await rm(dir, { recursive: true, force: true });
  });
  const open = async (overrides: SpecOverrides = {}) => {
    const spec = sessionSpec({ worktreePath: dir, ...overrides });
    await pool.open(spec);
    return spec.sessionId;
  };

  it("runs sessions in threads, with worktree files, and streams events as they are produced", async () => {
    const id = await open({ modules: ["env"], capabilities: [{ kind: "env", name: "APP_*", enabled: true, config: {} }] });
    const seen: LiveEvent[] = [];
    // Main-thread timer ticks from the console line to the end of the execution: streamed, the line
    // comes while the 400 ms loop still runs (dozens of ticks); held back to the end, it comes with
    // the outcome (none). A count, not a latency: load does not break it.
    let ticks = 0;
    let ticking: ReturnType<typeof setInterval> | undefined;
    const outcome = await pool.execute(
      id,
      repl("console.log(require('./util').answer, require('env').APP_X); const end = Date.now() + 400; while (Date.now() < end) {}; 'done'"),
      (event) => {
        seen.push(event);
        if (event.type === "console") ticking = setInterval(() => ticks++, 10);
      },
    );
    clearInterval(ticking);
    expect(outcome).toMatchObject({ status: "ok", result: { json: "done" } });
    expect(seen.map((e) => e.type)).toEqual(["input_echo", "console", "value"]);
    expect(seen[1]!.payload.text).toBe("42 1");
    expect(ticks).toBeGreaterThanOrEqual(5);
    expect(pool.liveIds()).toContain(id);
    const file = await collect(pool, id, runFile("main.js", "console.log(args.x)", { x: "arg" }));
    expect(file.events.map((e) => e.type)).toEqual(["input_echo", "console", "value"]);
  });

  it("keeps the main thread's event loop free while a session loops; a second execute is SESSION_BUSY", async () => {
    const a = await open({ settings: { limits: { cpu_ms: 5000 } } });
    const b = await open();
    const loop = pool.execute(a, repl("const end = Date.now() + 2000; while (Date.now() < end) {}; 'looped'"), () => {});
    const { result, ticks } = await timerTicks(
      (async () => {
        await new Promise((r) => setTimeout(r, 50));
        await expect(pool.execute(a, repl("1"), () => {})).rejects.toMatchObject({ code: "SESSION_BUSY" });
        const other = await collect(pool, b, repl("'other session'"));
        expect(other.outcome.result?.json).toBe("other session");
        // The refusal and b's answer came while a's loop still ran, not after it.
        expect(await hasSettled(loop)).toBe(false);
        return loop;
      })(),
    );
    expect(result).toMatchObject({ status: "ok", result: { json: "looped" } });
    // The main thread's 10 ms timer kept running through the 2 s loop (blocked: 0 or 1 ticks).
    expect(ticks).toBeGreaterThanOrEqual(20);
  });

  it("answers startup failures, and closes sessions", async () => {
    await expect(pool.open(sessionSpec({ worktreePath: dir, startupFiles: [{ path: "boot.js", order_index: 0, source: "throw new Error('no')" }] }))).rejects
      .toMatchObject({
        code: "STARTUP_FAILED",
        message: expect.stringContaining('startup file "boot.js" failed: Error: no'),
      });
    const id = await open();
    await pool.close(id);
    expect(pool.liveIds()).not.toContain(id);
    await expect(pool.execute(id, repl("1"), () => {})).rejects.toMatchObject({ code: "SESSION_NOT_LIVE" });
  });

  it("replaces a hung thread: the execution is RUNTIME_LOST, its neighbours are reported lost", async () => {
    const single = createNodeThreadRuntimes({ threads: 1, graceMs: 300, onLost: (ids, why) => lost.push([ids, why]) });
    try {
      const limits = { cpu_ms: 20, wall_ms: 100, mem_mb: 1024 };
      const hung = sessionSpec({ worktreePath: dir, settings: { limits } });
      const neighbour = sessionSpec({ worktreePath: dir });
      await single.open(hung);
      await single.open(neighbour);
      // One native operation QuickJS cannot interrupt: ~2 s on this machine.
      const err = await single.execute(hung.sessionId, repl("'x'.repeat(1e8).indexOf('y')"), () => {}).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "RUNTIME_LOST" });
      expect(lost.at(-1)).toEqual([[neighbour.sessionId], expect.stringContaining("did not answer")]);
      expect(single.liveIds()).toEqual([]);
      const fresh = sessionSpec({ worktreePath: dir });
      await single.open(fresh);
      expect((await collect(single, fresh.sessionId, repl("1 + 1"))).outcome.result?.json).toBe(2);
    } finally {
      await single.shutdown();
    }
  });

  it("an execution or an open whose request cannot be copied to the thread fails alone; the thread and its sessions live on", async () => {
    const before = lost.length;
    const id = await open();
    expect((await collect(pool, id, repl("globalThis.kept = 41"))).outcome.status).toBe("ok");
    // The REST layer never sends these (its input is JSON within 64 levels); the pool must not fall over on them.
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    for (const args of [{ f: () => 1 }, { deep }] as Record<string, unknown>[]) {
      const outcome = await pool.execute(id, runFile("main.js", "1", args), () => {});
      expect(outcome).toMatchObject({ status: "error", error: { message: expect.stringMatching(/could not be sent/) } });
    }
    await expect(
      pool.open(sessionSpec({ worktreePath: dir, capabilities: [{ kind: "global", name: "g", enabled: true, config: { deep } as Record<string, unknown> }] })),
    ).rejects.toMatchObject({
      code: "STARTUP_FAILED",
    });
    expect((await collect(pool, id, repl("kept + 1"))).outcome).toMatchObject({ status: "ok", result: { json: 42 } });
    expect(pool.liveIds()).toContain(id);
    expect(lost.length).toBe(before);
  });
});

describe("thread pool bookkeeping (threads simulated in-process)", () => {
  /** Threads that run the real thread host in this thread, and can be made to crash. */
  function simulated() {
    const ports: (ThreadPort<ToThread, FromThread> & { crash(reason: string): void })[] = [];
    const spawn = () => {
      let toMain: ((m: FromThread) => void) | undefined;
      let toThread: ((m: ToThread) => void) | undefined;
      let exit: ((reason: string) => void) | undefined;
      serveSessionThread(
        { post: (m) => queueMicrotask(() => toMain?.(structuredClone(m))), listen: (fn) => (toThread = fn) },
        { worktrees: memoryFileTree(), fetch: () => new Promise<Response>(() => {}) },
      );
      const port = {
        post: (m: ToThread) => queueMicrotask(() => toThread?.(structuredClone(m))),
        listen(onMessage: (m: FromThread) => void, onExit: (reason: string) => void) {
          toMain = onMessage;
          exit = onExit;
        },
        terminate() {
          toMain = toThread = undefined;
        },
        crash(reason: string) {
          toMain = toThread = undefined;
          exit?.(reason);
        },
      };
      ports.push(port);
      return port;
    };
    return { ports, spawn };
  }

  it("a crashed thread fails its running execution and reports its other sessions; a new thread takes over", async () => {
    const { ports, spawn } = simulated();
    const lost: string[][] = [];
    const pool = createThreadRuntimes(spawn, { threads: 1, onLost: (ids) => lost.push(ids) });
    const a = sessionSpec({ modules: ["http"], capabilities: [{ kind: "net", name: "example.test", enabled: true, config: {} }] });
    const b = sessionSpec();
    await pool.open(a);
    await pool.open(b);
    // Waits on a host fetch that never answers, until the thread "crashes".
    const running = pool.execute(a.sessionId, repl("await require('http').fetch('http://example.test/')"), () => {});
    await new Promise((r) => setTimeout(r, 10));
    ports[0]!.crash("segfault");
    await expect(running).rejects.toMatchObject({ code: "RUNTIME_LOST", message: expect.stringContaining("segfault") });
    expect(lost).toEqual([[b.sessionId]]);
    expect(pool.liveIds()).toEqual([]);
    expect(ports).toHaveLength(2);
    const c = sessionSpec();
    await pool.open(c);
    expect((await collect(pool, c.sessionId, repl("'alive'"))).outcome.result?.json).toBe("alive");
    await pool.shutdown();
    expect(lost).toHaveLength(1);
  });

  it("spreads sessions over the threads", async () => {
    const { ports, spawn } = simulated();
    const pool = createThreadRuntimes(spawn, { threads: 3 });
    for (let i = 0; i < 6; i++) await pool.open(sessionSpec());
    expect(ports).toHaveLength(3);
    expect(pool.liveIds()).toHaveLength(6);
    await pool.shutdown();
  });
});
