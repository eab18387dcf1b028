/**
 * SessionRuntimeObject and durableRuntimes on workerd: `wrangler dev` runs the check worker in
 * ./testdata/durable-check (Durable Object binding, R2 bucket for worktrees, QuickJS's .wasm as a module).
 */
import { rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answersOk, startProcess, type TrackedProcess, waitUntilReady } from "#test/runtimes/processes.ts";
import { freePort, ROOT } from "#test/runtimes/service.ts";
import { capability, repl, runFile, sessionSpec } from "./testing.ts";
import type { ExecutionOutcome, ExecutionRequest, LiveEvent, SessionSpec } from "./types.ts";

let wrangler: TrackedProcess | undefined;
let base: string;
let state: string;
let slow: Server;
let slowPort: number;

beforeAll(async () => {
  slow = createServer((_req, res) => setTimeout(() => res.end("slow answer"), 400));
  await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
  slowPort = (slow.address() as { port: number }).port;
  const port = await freePort();
  const inspector = await freePort();
  wrangler = startProcess(
    process.execPath,
    [
      "node_modules/wrangler/bin/wrangler.js",
      "dev",
      "-c",
      "apps/sessions/live/testdata/durable-check/wrangler.toml",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--persist-to",
      state = `.wrangler/test-state/durable-check-${port}-${crypto.randomUUID()}`,
      "--log-level",
      "warn",
      "--show-interactive-dev-session=false",
    ],
    { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" } },
  );
  base = `http://127.0.0.1:${port}`;
  await waitUntilReady(wrangler, () => answersOk(`${base}/health`), "wrangler dev (durable-check)");
  await call("/seed", { "wt/lib/util.js": "exports.twice = (x) => x * 2;", "wt/data.txt": "from R2" });
});

afterAll(async () => {
  await new Promise<void>((r) => slow.close(() => r()));
  await wrangler?.stop();
  if (state) await rm(join(ROOT, state), { recursive: true, force: true });
});

async function call<T = unknown>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  return (await res.json()) as T;
}

type Executed = { events: (LiveEvent & { at: number })[]; outcome: ExecutionOutcome; at: number; error?: { code: string; message: string } };
const execute = (sessionId: string, request: ExecutionRequest) => call<Executed>("/execute", { sessionId, request });
const open = (spec: SessionSpec) => call<{ error?: { code: string; message: string } }>("/open", spec);

describe("sessions in Durable Objects (wrangler dev)", () => {
  it("runs REPL and run-file executions against a worktree in R2, keeping state", async () => {
    const spec = sessionSpec({
      worktreePath: "/wt",
      modules: ["fs", "path"],
      capabilities: [capability("fs", "out")],
      startupFiles: [{ path: "init.js", order_index: 0, source: "var util = require('./lib/util')" }],
    });
    expect(await open(spec)).toEqual({});
    const first = await execute(spec.sessionId, repl("console.log('hi'); util.twice(21)"));
    expect(first.events.map((e) => e.type)).toEqual(["input_echo", "console", "value"]);
    expect(first.outcome).toMatchObject({ status: "ok", result: { json: 42 } });
    expect((await execute(spec.sessionId, repl("await require('fs').readFile('data.txt')"))).outcome.result?.json).toBe("from R2");
    await execute(spec.sessionId, repl("await require('fs').writeFile('out/new.txt', 'written')"));
    const file = await execute(spec.sessionId, runFile("main.js", "console.log(args.x, require('./lib/util.js').twice(2))", { x: "arg" }));
    expect(file.events[1]!.payload.text).toBe("arg 4");
    expect((await execute(spec.sessionId, repl("await require('fs').readdir('out')"))).outcome.result?.json).toEqual(["new.txt"]);
    expect(await call<string[]>("/live")).toContain(spec.sessionId);
  });

  it("ends a loop as timeout and answers the next input", async () => {
    const spec = sessionSpec({ worktreePath: "/wt", settings: { limits: { cpu_ms: 100 } } });
    await open(spec);
    const r = await execute(spec.sessionId, repl("while (true) {}"));
    expect(r.outcome).toMatchObject({ status: "timeout", limit: "cpu_ms" });
    expect(r.events.at(-1)?.type).toBe("system");
    expect((await execute(spec.sessionId, repl("1 + 1"))).outcome.result?.json).toBe(2);
  });

  it("streams events while the execution runs; a second execute is SESSION_BUSY", async () => {
    const spec = sessionSpec({ worktreePath: "/wt", modules: ["http"], capabilities: [capability("net", `127.0.0.1:${slowPort}`)] });
    await open(spec);
    const running = execute(spec.sessionId, repl(`console.log('before'); (await require('http').fetch('http://127.0.0.1:${slowPort}/')).body`));
    await new Promise((r) => setTimeout(r, 150));
    expect((await execute(spec.sessionId, repl("1"))).error?.code).toBe("SESSION_BUSY");
    const r = await running;
    expect(r.outcome.result?.json).toBe("slow answer");
    expect(r.at - r.events[1]!.at).toBeGreaterThan(200);
  });

  it("reports startup failures, and closes", async () => {
    const failing = await open(sessionSpec({ worktreePath: "/wt", startupFiles: [{ path: "boot.js", order_index: 0, source: "throw new Error('no')" }] }));
    expect(failing.error).toMatchObject({ code: "STARTUP_FAILED", message: expect.stringContaining('startup file "boot.js" failed') });
    const spec = sessionSpec({ worktreePath: "/wt" });
    await open(spec);
    await call("/close", { sessionId: spec.sessionId });
    expect(await call<string[]>("/live")).not.toContain(spec.sessionId);
    expect((await execute(spec.sessionId, repl("1"))).error?.code).toBe("SESSION_NOT_LIVE");
  });
});
