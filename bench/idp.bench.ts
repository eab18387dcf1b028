/**
 * Identity provider benchmark: `npm run bench:idp` (= `tsx bench/idp.bench.ts`).
 *
 * Ours runs as `npm run idp` runs it (`node lib/adapters/node/run.mjs apps/idp/entries/node.ts`: a cached
 * esbuild bundle of the TypeScript entry).
 *
 * 1. Ours vs panva's oidc-provider, each in its own child process on loopback, same RSA signing
 *    keys, measured with autocannon (50 connections, 1 s warm-up, then 5 s): discovery, JWKS and a
 *    client_credentials token request (form POST, HTTP Basic client authentication). Discovery and
 *    JWKS are also measured on plain Hono serving the same bodies (no middleware): the floor.
 * 2. Our full authorization code flow (POST /authorize, POST /token, GET /userinfo) as flows/s, from
 *    32 concurrent loops over keep-alive connections (undici Pool), with the state in memory, in a
 *    libSQL file (one instance), and in a libSQL file shared by two instances with consecutive
 *    requests alternating between them (round-robin at the client): alternating rounds, median.
 *    Beside the memory row, oidc-provider's full code flow the same way (GET /auth, its login
 *    interaction answered at once with login and consent, the resumed authorization, POST /token
 *    with PKCE, GET /me), a fresh browser (cookie jar) per flow as ours.
 * 3. Time from spawning `serve-dev` to the first /healthz answer (median of 5): that command with
 *    its bundle cached and with the bundle rebuilt (the first start after an edit), the entry
 *    through tsx, Deno, and `npm run idp` itself; and what Node and tsx cost before our code runs.
 * 4. RSS of our provider after 100,000 flows (VmRSS from /proc/<pid>/status), as `npm run idp`
 *    runs it and through tsx.
 *
 * Knobs (environment): BENCH_SECONDS (default 5), BENCH_ROUNDS (default 3), BENCH_RSS_FLOWS (default 100000),
 * BENCH_CLOCK_STEP (flows between two `/debug/clock` moves during the RSS run, default 10000; 0 = never),
 * BENCH_ONLY=flows (only the code flows of part 2, ours in its three state setups and oidc-provider's: a minute).
 * The script re-runs itself as `tsx bench/idp.bench.ts peer <port> <keys-file>` to host oidc-provider,
 * and as `... plain-hono <port> <bodies-file>` to host the floor. The servers are in idp-servers.ts,
 * the load (autocannon's targets, the code flows) in idp-load.ts.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeySet } from "../apps/idp/cli.ts";
import { forgetBundledEntry } from "#lib/adapters/node/bundle";
import { freePort } from "../test/runtimes/service.ts";
import { cannon, type CannonResult, fiveAfterWarmUp, fmt, median, ROOT, stopper, track, waitForHealth } from "./harness.ts";
import { peerFlow, peerPaths, runFlows, TARGETS } from "./idp-load.ts";
import {
  FILE_ONE,
  FILE_TWO,
  MEMORY,
  OUR_ENTRY,
  PEER_FLOWS,
  runPeer,
  runPlainHono,
  startOurs,
  startPeer,
  startPlainHono,
  startStateSetups,
} from "./idp-servers.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RSS_FLOWS = Number(process.env.BENCH_RSS_FLOWS ?? 100_000);
const CLOCK_STEP = Number(process.env.BENCH_CLOCK_STEP ?? 10_000);
const ONLY_FLOWS = process.env.BENCH_ONLY === "flows";

// ---------------------------------------------------------------------------------------------
// Start time and memory

/**
 * How the provider is started for the start-time measurement; `before` runs before each start.
 * `rss`: also measured after 100,000 flows.
 */
type Launcher = { name: string; command: (port: number) => [string, string[]]; before?: () => Promise<void>; rss?: true };

function launchers(): Launcher[] {
  const serve = (port: number) => ["serve-dev", "--addr", `127.0.0.1:${port}`];
  return [
    // What `npm run idp` runs, the sources unchanged since the last start.
    {
      name: "node lib/adapters/node/run.mjs apps/idp/entries/node.ts (cached bundle)",
      command: (port) => [process.execPath, [...OUR_ENTRY, ...serve(port)]],
      rss: true,
    },
    // The first start after an edit: the launcher builds the bundle first.
    {
      name: "the same, first start after a source change (bundle rebuilt)",
      command: (port) => [process.execPath, [...OUR_ENTRY, ...serve(port)]],
      before: async () => forgetBundledEntry(new URL("../apps/idp/entries/node.ts", import.meta.url)),
    },
    {
      name: "node --import tsx apps/idp/entries/node.ts",
      command: (port) => [process.execPath, ["--import", "tsx", "apps/idp/entries/node.ts", ...serve(port)]],
      rss: true,
    },
    {
      name: "deno run -A apps/idp/entries/deno.ts",
      command: (port) => [join(ROOT, "node_modules/deno/deno"), ["run", "-A", "apps/idp/entries/deno.ts", ...serve(port)]],
    },
    // What a person types; npm itself starts first (a Node process of its own) and then the entry.
    { name: "npm run idp -- serve-dev", command: (port) => ["npm", ["run", "-s", "idp", "--", ...serve(port)]] },
  ];
}

/** What Node and tsx cost before any of our code runs (each until the process exits). */
const START_FLOORS: { name: string; args: string[] }[] = [
  { name: "node -e ''", args: ["-e", ""] },
  { name: "node --import tsx -e ''", args: ["--import", "tsx", "-e", ""] },
];

async function timeToExit(args: string[]): Promise<number> {
  const t0 = performance.now();
  const proc = track(spawn(process.execPath, args, { cwd: ROOT, stdio: "ignore" }));
  await new Promise((resolve) => proc.once("exit", resolve));
  return performance.now() - t0;
}

/** Milliseconds from spawn to the first 200 from /healthz (polled every 2 ms). */
async function timeToHealthy(launcher: Launcher): Promise<number> {
  const port = await freePort();
  const [cmd, args] = launcher.command(port);
  await launcher.before?.();
  const t0 = performance.now();
  // Its own process group: `npm run` starts the server as a grandchild, which must stop too.
  const proc = track(spawn(cmd, args, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn" }, stdio: "ignore", detached: true }));
  await waitForHealth(`http://127.0.0.1:${port}/healthz`, proc, 2);
  const ms = performance.now() - t0;
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  process.kill(-proc.pid!, "SIGTERM");
  await exited;
  return ms;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
  return kb / 1024;
}

/**
 * RSS of a fresh provider after RSS_FLOWS flows. Sessions live 24 h and tokens 1 h: between
 * batches of CLOCK_STEP flows the provider's clock moves a day forward (at a quiet moment, so no
 * flow in flight sees its code expire), and expired state gets pruned as it would in a
 * long-running dev server. The pid is the server's: the launcher runs the provider in its own process.
 */
async function rssAfterFlows(launcher: Launcher, keys: string) {
  const port = await freePort();
  const [cmd, args] = launcher.command(port);
  const proc = track(spawn(cmd, args, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn", IDP_SIGNING_KEYS: keys }, stdio: "ignore" }));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(`${url}/healthz`, proc);
    const rssStart = await rssMb(proc.pid!);
    let clockMoves = 0;
    let flows = 0;
    const t0 = performance.now();
    while (flows < RSS_FLOWS) {
      const batch = await runFlows(url, { concurrency: 64, limit: Math.min(CLOCK_STEP > 0 ? CLOCK_STEP : Infinity, RSS_FLOWS - flows) });
      flows += batch.flows;
      if (CLOCK_STEP > 0 && flows < RSS_FLOWS) {
        clockMoves++;
        await (await fetch(`${url}/debug/clock`, { method: "POST", body: JSON.stringify({ advance_seconds: 86_401 }) })).arrayBuffer();
      }
    }
    const perSecond = flows / ((performance.now() - t0) / 1000);
    const rssEnd = await rssMb(proc.pid!);
    const counts = ((await (await fetch(`${url}/debug`)).json()) as { counts: Record<string, number> }).counts;
    return { flows, perSecond, rssStart, rssEnd, clockMoves, counts };
  } finally {
    await stopper(proc)();
  }
}

async function main(): Promise<void> {
  const keySet = await generateSigningKeySet();
  const keys = JSON.stringify(keySet);
  const dir = await mkdtemp(join(tmpdir(), "idp-bench-"));
  const keysFile = join(dir, "keys.json");
  await writeFile(keysFile, keys);
  console.log(`idp benchmark: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${new Date().toISOString()}`);

  // 1. Ours vs oidc-provider
  const rows: string[][] = [];
  const ratios: Record<string, number> = {};
  /** Peer's server CPU per request over ours: how much less work ours does for the same answer. */
  const cpuRatios: Record<string, number> = {};
  const ours = await startOurs(keys);
  const peer = await startPeer(keysFile);
  const plainHono = await startPlainHono(ours, dir);
  const peerPath = await peerPaths(peer);
  /** Plain Hono's requests per second and CPU per request, for discovery and JWKS. */
  const honoRows: string[][] = [];
  try {
    for (const target of ONLY_FLOWS ? [] : TARGETS) {
      // Rounds alternate ours, the peer and (for discovery and JWKS) the floor, so a change in the
      // machine's load (other engineers' test suites share the 2 cores) hits all alike; each
      // side's median round counts.
      const sides = [
        { who: "ours", server: ours, path: target.path(ours.url), runs: [] as CannonResult[] },
        { who: "oidc-provider", server: peer, path: peerPath[target.name]!, runs: [] as CannonResult[] },
      ];
      if (target.name !== "client_credentials") sides.push({ who: "plain Hono", server: plainHono, path: target.path(plainHono.url), runs: [] });
      for (const side of sides) await cannon(side.server, { ...target, path: () => side.path }, 1); // warm-up
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of sides) {
          const r = await cannon(side.server, { ...target, path: () => side.path }, SECONDS);
          if (r.non2xx > 0 || r.errors > 0) console.warn(`  ${side.who} ${target.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
          side.runs.push(r);
        }
      }
      const [mine, theirs] = sides.map((side) => median(side.runs.map((r) => r.rps)));
      const [mineCpu, theirsCpu] = sides.map((side) => median(side.runs.map((r) => r.cpuUsPerRequest)));
      const p99 = sides.map((side) => median(side.runs.map((r) => r.p99)));
      ratios[target.name] = mine! / theirs!;
      cpuRatios[target.name] = theirsCpu! / mineCpu!;
      const perRound = sides[0]!.runs.map((r, i) => `${fmt(r.rps / sides[1]!.runs[i]!.rps, 2)}x`).join(", ");
      rows.push([
        target.name,
        fmt(mine!),
        fmt(theirs!),
        `${fmt(ratios[target.name]!, 2)}x`,
        `rounds ${perRound}; server CPU ${fmt(mineCpu!)} / ${fmt(theirsCpu!)} µs per request (${fmt(cpuRatios[target.name]!, 2)}x); p99 ${p99[0]} / ${
          p99[1]
        } ms`,
      ]);
      const plain = sides[2];
      if (plain) {
        const rps = median(plain.runs.map((r) => r.rps));
        const cpu = median(plain.runs.map((r) => r.cpuUsPerRequest));
        honoRows.push([
          `${target.name}: plain Hono (the floor)`,
          fmt(rps),
          fmt(theirs!),
          `${fmt(rps / theirs!, 2)}x`,
          `server CPU ${fmt(cpu)} µs per request; ours reaches ${fmt((100 * mine!) / rps)}% of its rate`,
        ]);
      }
    }
  } catch (err) {
    await peer.stop();
    throw err;
  } finally {
    await plainHono.stop();
  }

  // 2. Code flows: ours with the memory store beside a libSQL file (one instance, and two
  // instances on one file with requests alternating between them), and oidc-provider's full code
  // flow (its default memory adapter), in alternating rounds.
  const stateSetups = await startStateSetups(ours, keys, dir);
  const flowRuns = new Map<string, number[]>([...stateSetups.map((s) => [s.name, []] as [string, number[]]), [PEER_FLOWS, []]]);
  const peerFlows = { urls: [peer.url], flow: peerFlow };
  try {
    for (const setup of stateSetups) await runFlows(setup.urls, { concurrency: 32, seconds: 1 }); // warm-up
    await runFlows(peerFlows.urls, { concurrency: 32, seconds: 1, flow: peerFlows.flow });
    for (let round = 0; round < ROUNDS; round++) {
      for (const setup of stateSetups) flowRuns.get(setup.name)!.push((await runFlows(setup.urls, { concurrency: 32, seconds: SECONDS })).perSecond);
      flowRuns.get(PEER_FLOWS)!.push((await runFlows(peerFlows.urls, { concurrency: 32, seconds: SECONDS, flow: peerFlows.flow })).perSecond);
    }
  } finally {
    for (const setup of stateSetups) await setup.stop();
    await peer.stop();
  }
  const flowRate = (name: string) => median(flowRuns.get(name)!);
  const flows = { perSecond: flowRate(MEMORY) };
  const flowRatio = flowRate(MEMORY) / flowRate(PEER_FLOWS);

  // 3. Start time
  const startRows: { name: string; times: number[] }[] = [];
  const launchersUsed = launchers();
  const rssEnds: number[] = [];
  for (const launcher of ONLY_FLOWS ? [] : launchersUsed) startRows.push({ name: launcher.name, times: await fiveAfterWarmUp(() => timeToHealthy(launcher)) });
  const starts = startRows[0]?.times ?? [];
  const floorRows: { name: string; times: number[] }[] = [];
  for (const floor of ONLY_FLOWS ? [] : START_FLOORS) floorRows.push({ name: floor.name, times: await fiveAfterWarmUp(() => timeToExit(floor.args)) });

  // 4. RSS after many flows: as `npm run idp` runs it, and through tsx (with its loader's thread)
  const rssRows: string[][] = [];
  for (const launcher of ONLY_FLOWS ? [] : launchersUsed.filter((l) => l.rss)) {
    const r = await rssAfterFlows(launcher, keys);
    rssRows.push([
      `RSS after ${fmt(r.flows)} flows: ${launcher.name}`,
      `${fmt(r.rssEnd, 1)} MB`,
      "-",
      "-",
      `${fmt(r.rssStart, 1)} MB at start; ${fmt(r.perSecond)} flows/s; ${r.clockMoves} clock moves; state left ${JSON.stringify(r.counts)}`,
    ]);
    rssEnds.push(r.rssEnd);
  }

  const table = [
    ["measure", "ours", "oidc-provider", "ratio", "notes (ours / peer)"],
    ...rows,
    ...honoRows,
    ...stateSetups.map((setup) => [
      `code flows/s (32 concurrent), state: ${setup.name}`,
      fmt(flowRate(setup.name)),
      setup.name === MEMORY ? fmt(flowRate(PEER_FLOWS)) : "-",
      setup.name === MEMORY
        ? `${fmt(flowRatio, 2)}x`
        : `${fmt(flowRate(setup.name) / flowRate(MEMORY), 2)}x memory${
          setup.name === FILE_TWO ? `, ${fmt(flowRate(FILE_TWO) / flowRate(FILE_ONE), 2)}x one instance` : ""
        }`,
      setup.name === MEMORY
        ? `rounds ${flowRuns.get(setup.name)!.map((r) => fmt(r)).join(", ")} / ${
          flowRuns.get(PEER_FLOWS)!.map((r) => fmt(r)).join(", ")
        }; a flow: ours 3 requests (login form, token, userinfo), oidc-provider 5 (auth, interaction, resume, token, userinfo)`
        : `rounds ${flowRuns.get(setup.name)!.map((r) => fmt(r)).join(", ")}`,
    ]),
    ...startRows.map((r) => [`first /healthz: ${r.name}`, `${fmt(median(r.times))} ms`, "-", "-", `median of 5: ${r.times.map((s) => fmt(s)).join(", ")} ms`]),
    ...floorRows.map((r) => [`process exit: ${r.name}`, `${fmt(median(r.times))} ms`, "-", "-", `median of 5: ${r.times.map((s) => fmt(s)).join(", ")} ms`]),
    ...rssRows,
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  console.log("");
  for (const [i, r] of table.entries()) {
    console.log("| " + r.map((c, j) => c.padEnd(widths[j]!)).join(" | ") + " |");
    if (i === 0) console.log("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
  }
  const allChecks = [
    ["discovery >= 3x", ratios.discovery! >= 3],
    ["jwks >= 3x", ratios.jwks! >= 3],
    ["client_credentials >= 2x", ratios.client_credentials! >= 2],
    ["code flows >= 1,000/s", flows.perSecond >= 1000],
    ["code flows >= 3x oidc-provider's", flowRatio >= 3],
    ["code flows >= 1,000/s, libSQL file, one instance", flowRate(FILE_ONE) >= 1000],
    ["libSQL file, one instance >= 0.7x memory", flowRate(FILE_ONE) >= 0.7 * flowRate(MEMORY)],
    ["libSQL file, two instances >= 0.9x one instance", flowRate(FILE_TWO) >= 0.9 * flowRate(FILE_ONE)],
    ["first /healthz < 300 ms (npm run idp's command)", median(starts) < 300],
    ["first /healthz < 300 ms (the same, bundle rebuilt)", median(startRows[1]?.times ?? []) < 300],
    ["RSS < 150 MB (npm run idp's command)", rssEnds[0]! < 150],
    ["RSS < 150 MB (tsx)", rssEnds[1]! < 150],
  ] as const;
  const checks = ONLY_FLOWS ? allChecks.filter(([name]) => name.startsWith("code flows") || name.startsWith("libSQL")) : allChecks;
  console.log("\ntargets: " + checks.map(([name, ok]) => `${ok ? "met" : "MISSED"}: ${name}`).join("; "));
}

if (process.argv[2] === "peer") await runPeer(Number(process.argv[3]), process.argv[4]!);
else if (process.argv[2] === "plain-hono") await runPlainHono(Number(process.argv[3]), process.argv[4]!);
else {
  try {
    await main();
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    process.exit(); // the "exit" hook stops any server still running
  }
}
