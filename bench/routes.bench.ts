/**
 * Route host benchmark: `npm run bench:routes` (= `tsx bench/routes.bench.ts`).
 *
 * 1. Requests per second (autocannon, 50 connections, 1 s warm-up then BENCH_SECONDS, BENCH_ROUNDS
 *    alternating rounds) of:
 *    - a public script route (`app.get("/hello").public().handle(() => "hello")`), served as
 *      `npm run routes -- serve` serves it (2 handler threads);
 *    - a planned route: bearer JWT from our identity provider (verified with jose against its JWKS),
 *      a resource resolved from memory, the scope authorizer, an audit event per outcome;
 *    - plain Hono on @hono/node-server returning the same body: the peer and the floor.
 *    Two floors, to show where the time goes: plain Hono that passes each request to a worker
 *    thread and back (what any thread pool costs), and plain Hono that answers through one call
 *    into a QuickJS sandbox on its own thread (what one sandbox call costs).
 *    - a reading route: the handler reads a path parameter, a query value, a header and a JSON body
 *      and answers JSON, so that laziness or caching that helps only an empty handler shows;
 *    - the peer for both script routes: the same handlers as a module Worker served by the
 *      workerd binary wrangler ships (node_modules/workerd), measured in the same rounds.
 * 2. A handler that burns 5 ms of CPU, with 1 and 2 handler threads: throughput grows with threads.
 * 3. Cold start: time from spawning `node lib/adapters/node/run.mjs apps/routes/entries/node.ts serve` (what
 *    `npm run routes` runs) on a 50-route script to its first answer (median of 5 after a warm-up),
 *    against `node -e ''` spawned to its exit in the same rounds (the ratio is the target: <= 3x).
 *    `tsx bench/routes.bench.ts cold` runs this part alone.
 *
 * The script re-runs itself as `... plain-hono <port> [thread|quickjs]` and
 * `... planned <port> <issuer> <script>`.
 *
 * `tsx bench/routes.bench.ts dispatch` measures the sandbox side alone, on one thread: the public
 * and the reading route's handlers called through `ScriptSandbox.dispatch` with the inputs the
 * host makes for the benchmark's requests (µs a call; BENCH_DISPATCH_CALLS calls a round, default
 * 20,000, best of BENCH_ROUNDS). To profile it: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import
 * tsx bench/routes.bench.ts dispatch`. A server's own profile lacks this part: the handler threads
 * start without the parent's flags (lib/adapters/node/threads.ts).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { startIdp } from "../apps/idp/testing.ts";
import { freePort } from "../test/runtimes/service.ts";
import { cannon, type CannonResult, type Child, fiveAfterWarmUp, fmt, median, ROOT, spawnNode, stopper, type Target, track, waitForHealth } from "./harness.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUTES_ENTRY = ["lib/adapters/node/run.mjs", "apps/routes/entries/node.ts"];

const SCRIPT = `const httpmod = require("httpmod");
const app = httpmod.app();
app.get("/hello").public().handle(() => "hello");
app.get("/notes/:id").auth(httpmod.user().required()).resource(httpmod.resource("note").idFromParam("id").mustExist()).allow("notes:read").audit("note.read")
  .handle((ctx) => "hello");
app.get("/burn").public().handle(() => { const end = Date.now() + 5; let x = 0; while (Date.now() < end) x++; return "burnt"; });
app.post("/read/:id").public().handle((ctx, res) => res.json({ id: ctx.params.id, q: ctx.request.query.q, agent: ctx.request.headers["x-agent"], n: ctx.body.n, tags: ctx.body.tags.length }));
// After the others: the dispatch bench calls handlers by their index.
app.get("/spin").public().handle(() => { const end = Date.now() + 1500; let x = 0; while (Date.now() < end) x++; return "spun"; });
`;

/** The same two handlers as a module Worker, for workerd. */
const WORKER = `export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/hello") return new Response("hello", { headers: { "content-type": "text/plain; charset=utf-8" } });
    const m = /^\\/read\\/([^/]+)$/.exec(url.pathname);
    if (m && request.method === "POST") {
      const body = await request.json();
      return Response.json({ id: decodeURIComponent(m[1]), q: url.searchParams.get("q"), agent: request.headers.get("x-agent"), n: body.n, tags: body.tags.length });
    }
    return new Response("not found", { status: 404 });
  },
};
`;

/** workerd serving WORKER on `port` (a config of its own, in `dir`). */
async function startWorkerd(dir: string): Promise<Child> {
  const port = await freePort();
  await writeFile(join(dir, "worker.js"), WORKER);
  await writeFile(
    join(dir, "workerd.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.js") ],
  compatibilityDate = "2025-01-01",
);
`,
  );
  const proc = track(spawn(join(ROOT, "node_modules/workerd/bin/workerd"), ["serve", join(dir, "workerd.capnp")], { cwd: dir, stdio: "ignore" }));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url + "/hello", proc);
  return { proc, url, stop: stopper(proc) };
}

/**
 * The peer: plain Hono answering the same body; with `floor`, each answer first makes a round
 * trip to a worker thread, or a call into a QuickJS sandbox.
 */
async function runPlainHono(port: number, floor?: string): Promise<void> {
  const { Hono } = await import("hono");
  const { serve } = await import("@hono/node-server");
  const app = new Hono();
  if (floor === "thread") {
    const { Worker } = await import("node:worker_threads");
    const worker = new Worker(
      `const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage({ id: m.id, body: "hello" }));`,
      { eval: true },
    );
    const waiting = new Map<number, (body: string) => void>();
    worker.on("message", (m: { id: number; body: string }) => waiting.get(m.id)?.(m.body));
    let next = 0;
    app.get("/hello", async (c) => {
      const id = next++;
      const body = await new Promise<string>((resolve) => {
        waiting.set(id, resolve);
        worker.postMessage({ id, path: c.req.path });
      });
      waiting.delete(id);
      return c.text(body);
    });
  } else if (floor === "quickjs") {
    const { loadQuickJS, createSandbox } = await import("#lib/sandbox");
    const sandbox = createSandbox(await loadQuickJS());
    await sandbox.evaluate("globalThis.hello = () => 'hello'", { mode: "script" });
    app.get("/hello", async (c) => c.text(String((await sandbox.call("hello")).value?.json)));
  } else app.get("/hello", (c) => c.text("hello"));
  serve({ fetch: app.fetch, port, hostname: "127.0.0.1" });
}

/**
 * The planned route needs a resource resolver, which the command line does not configure yet: the
 * same host as `routes serve` builds, through its API, with a resolver over a Map.
 */
async function runPlanned(port: number, issuer: string, scriptPath: string): Promise<void> {
  const { nodeRuntime } = await import("#lib/adapters/node");
  const { nodeThreadSpawner } = await import("#lib/adapters/node/threads");
  const { withRequestId } = await import("#lib/http");
  const { readFile } = await import("node:fs/promises");
  const { createRouteHost } = await import("../apps/routes/host/host.ts");
  const { createBearerAuthenticator } = await import("../apps/routes/auth/bearer.ts");
  const { scopeAuthorizer } = await import("../apps/routes/auth/scope-authorizer.ts");
  const { threadScriptRuntime } = await import("../apps/routes/script/runtime.ts");
  const { DEFAULT_SCRIPT_LIMITS } = await import("../apps/routes/script/script-sandbox.ts");
  let audited = 0;
  const notes = new Map([["n1", { id: "n1", tenantId: "" }]]);
  const host = createRouteHost({
    auth: {
      authenticator: createBearerAuthenticator({ issuer, audience: "bench" }),
      authorizer: scopeAuthorizer(),
      resources: { resolve: (q) => notes.get(q.id ?? "") ?? null },
      audit: { record: () => void audited++ },
    },
    runtime: (natives) =>
      threadScriptRuntime(nodeThreadSpawner(new URL("../apps/routes/entries/node-thread.ts", import.meta.url)), {
        natives,
        limits: DEFAULT_SCRIPT_LIMITS,
        threads: 2,
      }),
  });
  await host.loadScript({ entry: "/app.js", files: { "/app.js": await readFile(scriptPath, "utf8") } });
  const app = withRequestId({ fetch: (req: Request, env: object) => host.fetch(req, env) });
  await nodeRuntime().serve((req, env) => app.fetch(req, env), { hostname: "127.0.0.1", port });
}

async function startChild(args: string[], health: string, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const proc = spawnNode([...args.map((a) => (a === "PORT" ? String(port) : a.replace("PORT", String(port))))], { LOG_LEVEL: "warn", ...env });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url + health, proc);
  return { proc, url, stop: stopper(proc) };
}

const routesServe = (script: string, threads: number) =>
  startChild([...ROUTES_ENTRY, "serve", "--addr", "127.0.0.1:PORT", "--script", script, "--threads", String(threads), "--issuer", ""], "/hello");

/**
 * Spin isolation: while one handler spins for 1.5 s, the slowest of 20 requests to another route,
 * sent one after another (ms).
 */
async function spinIsolation(child: Child): Promise<number> {
  const spinning = fetch(`${child.url}/spin`).then((r) => r.text());
  await new Promise((resolve) => setTimeout(resolve, 100));
  let worst = 0;
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    await (await fetch(`${child.url}/hello`)).text();
    worst = Math.max(worst, performance.now() - started);
  }
  await spinning;
  return worst;
}

/** Alternating rounds of each server on one target; the medians. */
async function rounds(servers: { name: string; child: Child; target: Target }[]): Promise<Map<string, CannonResult>> {
  const seen = new Map<string, CannonResult[]>();
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of servers) {
      await cannon(s.child, s.target, 1);
      const result = await cannon(s.child, s.target, SECONDS);
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${s.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      seen.set(s.name, [...(seen.get(s.name) ?? []), result]);
    }
  }
  const out = new Map<string, CannonResult>();
  for (const [name, results] of seen) {
    const byRate = [...results].sort((a, b) => a.rps - b.rps);
    out.set(name, byRate[Math.floor(byRate.length / 2)]!);
  }
  return out;
}

/** Time from spawning `node -e ''` to its exit: the floor a Node process costs on this machine. */
async function bareNode(): Promise<number> {
  const t0 = performance.now();
  const proc = track(spawn(process.execPath, ["-e", ""], { stdio: "ignore" }));
  await new Promise((resolve) => proc.once("exit", resolve));
  return performance.now() - t0;
}

/** Cold starts of the 50-route script, each after a `node -e ''` in the same round, so both see
 * the same machine (median of 5 after a warm-up each). */
async function coldStart(dir: string): Promise<{ starts: number[]; bare: number[] }> {
  const lines = ['const httpmod = require("httpmod");', "const app = httpmod.app();"];
  for (let i = 0; i < 50; i++) {
    lines.push(
      i % 2 === 0
        ? `app.get("/r${i}/:id").public().handle((ctx) => "route ${i} " + ctx.params.id);`
        : `app.post("/r${i}").auth(httpmod.user().required()).csrf().allow("r:${i}").audit("r${i}").handle(() => "ok");`,
    );
  }
  const script = join(dir, "fifty.js");
  await writeFile(script, lines.join("\n"));
  const bare: number[] = [];
  const starts = await fiveAfterWarmUp(async () => {
    bare.push(await bareNode());
    const port = await freePort();
    const t0 = performance.now();
    const proc = track(
      spawn(process.execPath, [...ROUTES_ENTRY, "serve", "--addr", `127.0.0.1:${port}`, "--script", script], {
        cwd: ROOT,
        env: { ...process.env, LOG_LEVEL: "warn" },
        stdio: "ignore",
      }),
    );
    await waitForHealth(`http://127.0.0.1:${port}/r0/x`, proc, 2);
    const ms = performance.now() - t0;
    await stopper(proc)();
    return ms;
  });
  return { starts, bare: bare.slice(1) }; // the warm-up round's is dropped too
}

/** `tsx bench/routes.bench.ts cold`: the first-answer measurement alone. */
async function runCold(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "routes-bench-"));
  const { starts, bare } = await coldStart(dir);
  await rm(dir, { recursive: true, force: true });
  console.log(coldRow(starts, bare));
}

const coldRow = (starts: number[], bare: number[]) =>
  `| cold start, 50-route script, first answer | ${fmt(median(starts))} ms | ${(median(starts) / median(bare)).toFixed(2)}x \`node -e ''\` | median of 5: ${
    starts.map((s) => fmt(s)).join(", ")
  } ms; \`node -e ''\` in the same rounds: ${fmt(median(bare))} ms (${bare.map((s) => fmt(s)).join(", ")}) |`;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "routes-bench-"));
  const script = join(dir, "app.js");
  await writeFile(script, SCRIPT);
  console.log(`routes benchmark: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${new Date().toISOString()}`);
  const idp = await startIdp({
    accessTokenFormat: "jwt",
    accessTokenAudience: "bench",
    clients: [{ client_id: "bench", client_secret: "bench-secret", redirect_uris: ["http://localhost/cb"] }],
  });
  const tokenRes = await fetch(`${idp.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: "bench", client_secret: "bench-secret", scope: "notes:read" }),
  });
  const { access_token } = (await tokenRes.json()) as { access_token: string };

  const hono = await startChild(["--import", "tsx", "bench/routes.bench.ts", "plain-hono", "PORT"], "/hello");
  const viaThread = await startChild(["--import", "tsx", "bench/routes.bench.ts", "plain-hono", "PORT", "thread"], "/hello");
  const viaQuickJS = await startChild(["--import", "tsx", "bench/routes.bench.ts", "plain-hono", "PORT", "quickjs"], "/hello");
  const ours = await routesServe(script, 2);
  const workerd = await startWorkerd(dir);
  const planned = await startChild(["--import", "tsx", "bench/routes.bench.ts", "planned", "PORT", idp.issuer, script], "/hello");
  const hello: Target = { name: "hello", path: () => "/hello" };
  const note: Target = { name: "planned", path: () => "/notes/n1", headers: { authorization: `Bearer ${access_token}` } };
  const reading: Target = {
    name: "reading",
    method: "POST",
    path: () => "/read/n%201?q=find",
    headers: { "x-agent": "bench", "content-type": "application/json" },
    body: JSON.stringify({ n: 7, tags: ["a", "b", "c"] }),
  };
  const results = await rounds([
    { name: "plain Hono", child: hono, target: hello },
    { name: "floor: plain Hono + a worker-thread round trip", child: viaThread, target: hello },
    { name: "floor: plain Hono + one QuickJS call (same thread)", child: viaQuickJS, target: hello },
    { name: "workerd, the handler as a module Worker (peer)", child: workerd, target: hello },
    { name: "workerd, the reading handler (peer)", child: workerd, target: reading },
    { name: "public script route", child: ours, target: hello },
    { name: "reading route", child: ours, target: reading },
    { name: "planned route", child: planned, target: note },
  ]);
  const spinWorstMs = await spinIsolation(ours);
  await Promise.all([hono.stop(), viaThread.stop(), viaQuickJS.stop(), workerd.stop(), ours.stop(), planned.stop()]);

  const burn: Target = { name: "burn", path: () => "/burn" };
  const burnRates: [number, CannonResult][] = [];
  for (const threads of [1, 2]) {
    const child = await routesServe(script, threads);
    burnRates.push([threads, (await rounds([{ name: `burn ${threads}`, child, target: burn }])).get(`burn ${threads}`)!]);
    await child.stop();
  }
  const { starts, bare } = await coldStart(dir);
  await idp.stop();
  await rm(dir, { recursive: true, force: true });

  const floor = results.get("plain Hono")!;
  const row = (name: string, r: CannonResult, ratio: string, notes: string) => `| ${name} | ${fmt(r.rps)} | ${ratio} | ${notes} |`;
  const ratioOf = (r: CannonResult) => r.rps / floor.rps;
  const cpu = (r: CannonResult) => `server CPU ${fmt(r.cpuUsPerRequest)} µs per request; p99 ${r.p99} ms`;
  console.log("\n| measure | req/s | vs plain Hono | notes |\n|---|---|---|---|");
  console.log(row("plain Hono, the same body (peer)", floor, "1.00x", cpu(floor)));
  for (
    const name of [
      "floor: plain Hono + a worker-thread round trip",
      "floor: plain Hono + one QuickJS call (same thread)",
      "workerd, the handler as a module Worker (peer)",
      "workerd, the reading handler (peer)",
      "public script route",
      "reading route",
      "planned route",
    ]
  ) console.log(row(name, results.get(name)!, `${ratioOf(results.get(name)!).toFixed(2)}x`, cpu(results.get(name)!)));
  for (const [threads, r] of burnRates) {
    console.log(
      row(`5 ms CPU handler, ${threads} thread${threads > 1 ? "s" : ""}`, r, "-", `${(r.rps / burnRates[0]![1].rps).toFixed(2)}x one thread's rate; ${cpu(r)}`),
    );
  }
  console.log(`| spin isolation: slowest of 20 requests while a handler spins 1.5 s | ${fmt(spinWorstMs)} ms | - | 2 handler threads |`);
  console.log(coldRow(starts, bare));

  const pub = ratioOf(results.get("public script route")!);
  const plan = ratioOf(results.get("planned route")!);
  const vsWorkerd = results.get("public script route")!.rps / results.get("workerd, the handler as a module Worker (peer)")!.rps;
  // The floor of a script route: plain Hono plus what one thread round trip and one QuickJS call
  // add on top of it (server CPU per request).
  const honoCpu = floor.cpuUsPerRequest;
  const floorCpu = honoCpu + (results.get("floor: plain Hono + a worker-thread round trip")!.cpuUsPerRequest - honoCpu) +
    (results.get("floor: plain Hono + one QuickJS call (same thread)")!.cpuUsPerRequest - honoCpu);
  const cpuX = (name: string) => results.get(name)!.cpuUsPerRequest / floorCpu;
  console.log(
    `\nthe floor of a script route: ${fmt(floorCpu)} µs of server CPU a request (plain Hono ${fmt(honoCpu)} µs + a thread round trip + a QuickJS call)`,
  );
  const targets = [
    [vsWorkerd >= 0.8, `public script route >= 0.8x workerd's requests/s (${vsWorkerd.toFixed(2)}x)`],
    [cpuX("public script route") <= 1.5, `public route CPU <= 1.5x the floor (${cpuX("public script route").toFixed(2)}x)`],
    [cpuX("reading route") <= 2, `reading route CPU <= 2x the floor (${cpuX("reading route").toFixed(2)}x)`],
    [cpuX("planned route") <= 2.2, `planned route CPU <= 2.2x the floor (${cpuX("planned route").toFixed(2)}x)`],
    [pub >= 0.5, `public script route >= 0.5x plain Hono (${pub.toFixed(2)}x)`],
    [plan >= 0.35, `planned route >= 0.35x plain Hono (${plan.toFixed(2)}x)`],
    [burnRates[1]![1].rps > burnRates[0]![1].rps * 1.3, "5 ms handler: 2 threads > 1.3x one thread"],
    [median(starts) <= 3 * median(bare), `first answer <= 3x \`node -e ''\` (${(median(starts) / median(bare)).toFixed(2)}x: ${fmt(median(starts))} ms)`],
    [spinWorstMs < 50, `other routes answer within 50 ms while a handler spins (${fmt(spinWorstMs)} ms)`],
  ] as const;
  console.log(`\ntargets: ${targets.map(([ok, what]) => `${ok ? "met" : "MISSED"}: ${what}`).join("; ")}`);
}

/** The sandbox side alone (see the top of this file): µs per `dispatch` of each route's handler. */
async function runDispatch(): Promise<void> {
  const { loadQuickJS } = await import("#lib/sandbox");
  const { createRouteHost } = await import("../apps/routes/host/host.ts");
  const { inProcessScriptRuntime } = await import("../apps/routes/script/runtime.ts");
  const { DEFAULT_SCRIPT_LIMITS, loadScriptSandbox } = await import("../apps/routes/script/script-sandbox.ts");
  type Input = Parameters<ReturnType<typeof inProcessScriptRuntime>["dispatch"]>[1];
  const engine = await loadQuickJS();
  const bundle = { entry: "/app.js", files: { "/app.js": SCRIPT } };
  // The inputs the host builds for the benchmark's requests, caught on their way to the runtime.
  const inputs = new Map<number, Input>();
  const host = createRouteHost({
    runtime: (natives, hostCalls) => {
      const runtime = inProcessScriptRuntime(engine, { natives, hostCalls, limits: DEFAULT_SCRIPT_LIMITS });
      return { ...runtime, dispatch: (handler: number, input: Input) => (inputs.set(handler, input), runtime.dispatch(handler, input)) };
    },
  });
  await host.loadScript(bundle);
  const requests: [string, number, Request][] = [
    ["public route (/hello)", 0, new Request("http://127.0.0.1/hello", { headers: { "user-agent": "autocannon" } })],
    [
      "reading route (/read/:id)",
      3,
      new Request("http://127.0.0.1/read/n%201?q=find", {
        method: "POST",
        headers: { "user-agent": "autocannon", "x-agent": "bench", "content-type": "application/json" },
        body: JSON.stringify({ n: 7, tags: ["a", "b", "c"] }),
      }),
    ],
  ];
  const sandbox = await loadScriptSandbox(engine, bundle, { mountables: {}, assets: {}, staticFiles: false, services: {} });
  const calls = Number(process.env.BENCH_DISPATCH_CALLS ?? 20_000);
  console.log(
    `sandbox side: ScriptSandbox.dispatch on one thread, best of ${ROUNDS} rounds of ${fmt(calls)} calls (the input made once, as the runtime makes it)`,
  );
  for (const [name, handler, request] of requests) {
    const res = await host.fetch(request, { requestId: "bench", clientAddress: "127.0.0.1" });
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${await res.text()}`);
    const json = JSON.stringify(inputs.get(handler));
    const best: number[] = [];
    for (let r = 0; r < ROUNDS + 1; r++) {
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) {
        const outcome = await sandbox.dispatch(handler, json);
        if (!outcome.ok) throw new Error(`${name}: ${outcome.message}`);
      }
      if (r > 0) best.push(((performance.now() - t0) * 1000) / calls); // the first round warms up
    }
    console.log(`| ${name} | ${Math.min(...best).toFixed(1)} µs a dispatch | rounds: ${best.map((b) => b.toFixed(1)).join(", ")} µs |`);
  }
  sandbox.dispose();
  await host.close();
}

const [mode, port, ...rest] = process.argv.slice(2);
if (mode === "dispatch") await runDispatch();
else if (mode === "cold") await runCold();
else if (mode === "plain-hono") await runPlainHono(Number(port), rest[0]);
else if (mode === "planned") await runPlanned(Number(port), rest[0]!, rest[1]!);
else await main();
