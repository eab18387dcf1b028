// deno-lint-ignore-file no-explicit-any -- JSON read back from a service, typed where it is checked
/**
 * Session service benchmark: `npm run bench:sessions` (= `tsx bench/sessions.bench.ts`).
 *
 * Every measure is taken next to Node's `vm` module, the unsandboxed floor, in the same run:
 *
 * 1. Engine costs in this process (p50 of repeated runs): create + dispose, create + first
 *    evaluation + dispose (the sandbox's bootstrap runs before its first evaluation), a no-op
 *    evaluation, a value, a 10,000-iteration loop and a `console.log` of three arguments, through
 *    raw quickjs-emscripten, lib/sandbox, the session layer's SessionRuntime, and node:vm.
 * 2. REPL executions over HTTP, persistence included: the real service (`apps/sessions/entries/node.ts
 *    serve`, worker threads, an embedded libSQL `file:` database) against a floor server (Hono on
 *    @hono/node-server evaluating with node:vm, nothing stored), each in its own child process,
 *    driven by CONCURRENCY loops in this process, each loop on its own session (one execution per
 *    session at a time). Also the server's CPU time per execution (all its threads, and its main
 *    thread alone), from /proc.
 * 3. RSS with 10,000 live idle sessions: created over HTTP on both servers, VmRSS of each process.
 *
 * Knobs (environment): BENCH_SECONDS (default 5), BENCH_CONCURRENCY (default 16),
 * BENCH_IDLE_SESSIONS (default 10000), BENCH_THREADS (the service's --threads, default 2),
 * BENCH_DB (the service's --db, default a `file:` database in a temporary directory).
 * The script re-runs itself as `tsx bench/sessions.bench.ts floor <port>` to host the floor server.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { Pool } from "undici";
import { memoryFileTree } from "#lib/files";
import { createSandbox, loadQuickJS } from "#lib/sandbox";
import { SessionRuntime } from "../apps/sessions/live/session-runtime.ts";
import { sessionSpec } from "../apps/sessions/live/testing.ts";
import { freePort } from "../test/runtimes/service.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const IDLE = Number(process.env.BENCH_IDLE_SESSIONS ?? 10_000);
const THREADS = Number(process.env.BENCH_THREADS ?? 2);
const DB = process.env.BENCH_DB;

// ---------------------------------------------------------------------------------------------
// The floor: the same HTTP shape, node:vm instead of QuickJS, nothing stored.

async function runFloor(port: number): Promise<void> {
  const { Hono } = await import("hono");
  const { serve } = await import("@hono/node-server");
  const contexts = new Map<string, vm.Context>();
  const app = new Hono();
  app.post("/api/v1/sessions", (c) => {
    const id = crypto.randomUUID();
    contexts.set(id, vm.createContext({}));
    return c.json({ id, status: "ready" }, 201);
  });
  app.post("/api/v1/executions/repl", async (c) => {
    const { session_id, input } = await c.req.json<{ session_id: string; input: string }>();
    const context = contexts.get(session_id);
    if (!context) return c.json({ error: { code: "SESSION_NOT_FOUND", message: "no such session" } }, 404);
    const value = vm.runInContext(input, context) as unknown;
    return c.json({ id: crypto.randomUUID(), session_id, status: "ok", result: { type: typeof value, preview: String(value), json: value } }, 201);
  });
  serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => process.stdout.write("listening\n"));
}

// ---------------------------------------------------------------------------------------------
// Helpers

async function p50(n: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await fn();
  const out: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out[i] = performance.now() - t;
  }
  return out.sort((a, b) => a - b)[n >> 1]!;
}

interface Server {
  name: string;
  proc: ChildProcess;
  url: string;
  pool: Pool;
  stop(): Promise<void>;
}

async function startServer(name: string, args: string[], healthPath: string): Promise<Server> {
  const port = await freePort();
  const proc = spawn(process.execPath, ["--import", "tsx", ...args.map((a) => a.replace("{port}", String(port)))], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${name} did not start`);
    try {
      const res = await fetch(url + healthPath, { method: healthPath.includes("sessions") ? "POST" : "GET" }).catch(() => undefined);
      if (res && res.status < 500) {
        await res.arrayBuffer();
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const pool = new Pool(url, { connections: CONCURRENCY * 2, pipelining: 1 });
  return {
    name,
    proc,
    url,
    pool,
    async stop() {
      await pool.close();
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

async function call(server: Server, method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await server.pool.request({
    method,
    path,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

async function rssMiB(proc: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${proc.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** CPU time (user + system) of a process so far, ms: all its threads, and its main thread. */
async function cpuMs(proc: ChildProcess): Promise<{ total: number; main: number } | undefined> {
  const ticks = async (task: string) => {
    const stat = await readFile(`/proc/${proc.pid}/task/${task}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms (USER_HZ = 100)
  };
  try {
    let total = 0;
    for (const task of await readdir(`/proc/${proc.pid}/task`)) total += await ticks(task).catch(() => 0);
    return { total, main: await ticks(String(proc.pid)) };
  } catch {
    return undefined; // not Linux
  }
}

/** A template and a ready session on the real service, in a fresh worktree. */
async function realSession(server: Server, templateId: string, worktree: string): Promise<string> {
  const r = await call(server, "POST", "/api/v1/sessions", {
    template_id: templateId,
    workspace_id: "bench",
    base_commit_oid: "0000000000000000000000000000000000000000",
    worktree_path: worktree,
  });
  if (r.status !== 201) throw new Error(`session create: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.id;
}

/** REPL executions per second from CONCURRENCY loops, one session each, over SECONDS, and the
 * server's CPU time per execution (µs) in that window. */
async function replRate(
  server: Server,
  sessions: string[],
): Promise<{ perSecond: number; p50Ms: number; failures: number; cpuUs?: { total: number; main: number } }> {
  let stopAt = 0;
  let done = 0;
  let failures = 0;
  const latencies: number[] = [];
  const loop = async (sessionId: string, measuring: () => boolean) => {
    while (Date.now() < stopAt) {
      const t = performance.now();
      const r = await call(server, "POST", "/api/v1/executions/repl", { session_id: sessionId, input: "globalThis.n = (globalThis.n ?? 0) + 1" });
      if (r.status !== 201 || r.json.status !== "ok") failures++;
      else if (measuring()) {
        done++;
        latencies.push(performance.now() - t);
      }
    }
  };
  stopAt = Date.now() + 1000; // warm-up
  await Promise.all(sessions.map((id) => loop(id, () => false)));
  const cpuBefore = await cpuMs(server.proc);
  const started = performance.now();
  stopAt = Date.now() + SECONDS * 1000;
  await Promise.all(sessions.map((id) => loop(id, () => true)));
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = await cpuMs(server.proc);
  latencies.sort((a, b) => a - b);
  const cpuUs = cpuBefore && cpuAfter
    ? { total: ((cpuAfter.total - cpuBefore.total) * 1000) / done, main: ((cpuAfter.main - cpuBefore.main) * 1000) / done }
    : undefined;
  return { perSecond: done / elapsed, p50Ms: latencies[latencies.length >> 1] ?? NaN, failures, cpuUs };
}

/** Creates `count` sessions with bounded concurrency. */
async function createMany(count: number, create: (i: number) => Promise<string>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await create(next++);
    }),
  );
  return performance.now() - started;
}

// ---------------------------------------------------------------------------------------------
// Main

async function engineCosts(): Promise<void> {
  const engine = await loadQuickJS();
  const options = { worktrees: memoryFileTree() };
  const spec = sessionSpec({ modules: ["fs", "path", "http", "env"] });
  const LOOP = "(() => { let s = 0; for (let i = 0; i < 10000; i++) s += i; return s })()";
  const LOG = "console.log('hello', 1, {a: [1, 2]})";
  const repl = (input: string) => ({ kind: "repl" as const, input });

  const rawCreate = await p50(2000, () => {
    const rt = engine.newRuntime();
    rt.newContext().dispose();
    rt.dispose();
  });
  const sandboxCreate = await p50(2000, () => createSandbox(engine).dispose());
  const sessionCreate = await p50(2000, async () => (await SessionRuntime.open(engine, spec, options)).close());
  const vmCreate = await p50(500, () => vm.createContext({}));

  const rawFirst = await p50(1000, () => {
    const rt = engine.newRuntime();
    const ctx = rt.newContext();
    ctx.evalCode("undefined", "x", { type: "global" }).dispose();
    ctx.dispose();
    rt.dispose();
  });
  const sandboxFirst = await p50(1000, async () => {
    const sb = createSandbox(engine);
    await sb.evaluate("undefined");
    sb.dispose();
  });
  const sessionFirst = await p50(1000, async () => {
    const session = await SessionRuntime.open(engine, spec, options);
    await session.execute(repl("undefined"), () => {});
    session.close();
  });
  const vmFirst = await p50(500, () => vm.runInContext("undefined", vm.createContext({})));

  const rt = engine.newRuntime();
  const ctx = rt.newContext();
  const rawEval = await p50(20000, () => ctx.evalCode("undefined", "x", { type: "global" }).dispose());
  const rawValue = await p50(20000, () => ctx.evalCode("1+1", "x", { type: "global" }).dispose());
  const rawLoop = await p50(500, () => ctx.evalCode(LOOP, "x", { type: "global" }).dispose());
  ctx.dispose();
  rt.dispose();
  const sandbox = createSandbox(engine);
  const sandboxEval = await p50(20000, () => sandbox.evaluate("undefined"));
  const sandboxValue = await p50(20000, () => sandbox.evaluate("1+1"));
  const sandboxLoop = await p50(500, () => sandbox.evaluate(LOOP));
  const sandboxLog = await p50(5000, () => sandbox.evaluate(LOG));
  sandbox.dispose();
  const session = await SessionRuntime.open(engine, spec, options);
  const sessionEval = await p50(20000, () => session.execute(repl("undefined"), () => {}));
  const sessionValue = await p50(20000, () => session.execute(repl("1+1"), () => {}));
  const sessionLoop = await p50(500, () => session.execute(repl(LOOP), () => {}));
  const sessionLog = await p50(5000, () => session.execute(repl(LOG), () => {}));
  session.close();
  const vmContext = vm.createContext({ console: { log: (...args: unknown[]) => args.map(String).join(" ") } });
  const vmEval = await p50(20000, () => vm.runInContext("undefined", vmContext));
  const vmValue = await p50(20000, () => vm.runInContext("1+1", vmContext));
  const vmLoop = await p50(500, () => vm.runInContext(LOOP, vmContext));
  const vmLog = await p50(5000, () => vm.runInContext(LOG, vmContext));

  const fmt = (ms: number) => (Number.isNaN(ms) ? "-" : ms < 0.1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(3)} ms`);
  const ratio = (a: number, b: number) => (Number.isNaN(b) ? "-" : (a / b).toFixed(2));
  console.log(`\n1. Engine costs in one process (Node ${process.version}), p50\n`);
  console.log("operation                       | raw QuickJS | lib/sandbox | SessionRuntime | node:vm   | lib/sandbox vs raw | vs vm");
  console.log("--------------------------------|-------------|-------------|----------------|-----------|--------------------|------");
  for (
    const [name, raw, sb, sess, floor] of [
      ["create + dispose", rawCreate, sandboxCreate, sessionCreate, vmCreate],
      ["create + first eval + dispose", rawFirst, sandboxFirst, sessionFirst, vmFirst],
      ["no-op evaluate", rawEval, sandboxEval, sessionEval, vmEval],
      ["evaluate 1+1 (value)", rawValue, sandboxValue, sessionValue, vmValue],
      ["10,000-iteration loop", rawLoop, sandboxLoop, sessionLoop, vmLoop],
      ["console.log of 3 arguments", NaN, sandboxLog, sessionLog, vmLog],
    ] as const
  ) {
    console.log(
      `${name.padEnd(32)}| ${fmt(raw).padEnd(12)}| ${fmt(sb).padEnd(12)}| ${fmt(sess).padEnd(15)}| ${fmt(floor).padEnd(10)}| ${ratio(sb, raw).padEnd(19)}| ${
        ratio(sb, floor)
      }`,
    );
  }
  console.log("(SessionRuntime: with the four catalog modules configured; its execute adds the input_echo event and the outcome.)");
}

async function overHttp(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "sessions-bench-"));
  const real = await startServer(
    "service",
    ["apps/sessions/entries/node.ts", "serve", "--addr", "127.0.0.1:{port}", "--db", DB ?? `file:${join(dir, "bench.db")}`, "--threads", String(THREADS)],
    "/api/v1/health",
  );
  const floor = await startServer("floor", ["bench/sessions.bench.ts", "floor", "{port}"], "/api/v1/sessions");
  try {
    const template = await call(real, "POST", "/api/v1/templates", { name: `bench-${Date.now()}` });
    const realSessions = await Promise.all(Array.from({ length: CONCURRENCY }, () => realSession(real, template.json.id, dir)));
    const floorSessions = await Promise.all(Array.from({ length: CONCURRENCY }, async () => (await call(floor, "POST", "/api/v1/sessions")).json.id as string));

    const ours = await replRate(real, realSessions);
    const theirs = await replRate(floor, floorSessions);
    const check = await call(real, "GET", `/api/v1/executions?session_id=${realSessions[0]}&limit=1`);
    const cpu = (r: typeof ours) => (r.cpuUs ? `${r.cpuUs.total.toFixed(0)} µs (main thread ${r.cpuUs.main.toFixed(0)})` : "-");
    const db = DB ?? "file:";
    console.log(`\n2. REPL executions over HTTP (${CONCURRENCY} concurrent loops, one session each, ${SECONDS} s)\n`);
    console.log("server                                          | executions/s | p50 latency | server CPU per execution      | failures");
    console.log("------------------------------------------------|--------------|-------------|-------------------------------|---------");
    for (
      const [name, r] of [
        [`service (QuickJS, ${THREADS} threads, libSQL ${db})`, ours],
        ["floor (Hono + node:vm, nothing stored)", theirs],
      ] as const
    ) {
      console.log(`${name.padEnd(48)}| ${r.perSecond.toFixed(0).padEnd(13)}| ${`${r.p50Ms.toFixed(2)} ms`.padEnd(12)}| ${cpu(r).padEnd(30)}| ${r.failures}`);
    }
    console.log(
      `ratio service / floor: ${(ours.perSecond / theirs.perSecond).toFixed(2)}; target >= 1,000/s: ${ours.perSecond >= 1000 ? "met" : "missed"}; ` +
        `last stored execution: ${check.json[0]?.status} (${check.json[0]?.result?.preview})`,
    );

    const realBefore = await rssMiB(real.proc);
    const floorBefore = await rssMiB(floor.proc);
    const realMs = await createMany(IDLE, () => realSession(real, template.json.id, dir));
    const floorMs = await createMany(IDLE, async () => (await call(floor, "POST", "/api/v1/sessions")).json.id);
    const summary = await call(real, "GET", "/api/v1/runtime/summary");
    const realAfter = await rssMiB(real.proc);
    const floorAfter = await rssMiB(floor.proc);
    console.log(`\n3. ${IDLE} more live idle sessions, created over HTTP (${summary.json.active_sessions} live on the service)\n`);
    console.log("server   | RSS before | RSS after  | per session | created in");
    console.log("---------|------------|------------|-------------|-----------");
    for (
      const [name, before, after, ms] of [
        ["service", realBefore, realAfter, realMs],
        ["floor", floorBefore, floorAfter, floorMs],
      ] as const
    ) {
      console.log(
        `${name.padEnd(9)}| ${before.toFixed(0).padStart(6)} MiB | ${after.toFixed(0).padStart(6)} MiB | ${
          (((after - before) * 1024) / IDLE).toFixed(1).padStart(6)
        } KiB  | ${(ms / 1000).toFixed(1)} s`,
      );
    }
    console.log(
      `service RSS with ${summary.json.active_sessions} live sessions: ${realAfter.toFixed(0)} MiB; target < 1024 MiB: ${realAfter < 1024 ? "met" : "missed"}`,
    );
  } finally {
    await real.stop();
    await floor.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "floor") {
  await runFloor(Number(process.argv[3]));
} else {
  console.log(`sessions benchmark: ${new Date().toISOString()}, load average ${(await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ")}`);
  await engineCosts();
  await overHttp();
  console.log(`\nload average at the end: ${(await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ")}`);
}
