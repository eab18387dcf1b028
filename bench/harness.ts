/**
 * What every benchmark script shares: child servers on loopback (spawned, tracked so a failing run
 * leaves none behind, stopped), waiting for them to answer, autocannon runs with the server's CPU
 * time per request beside the rate, and the small statistics the reports print.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

// Untyped packages: imported by a computed name so TypeScript treats them as `any`.
// deno-lint-ignore no-explicit-any -- untyped on purpose
export const importUntyped = (name: string): Promise<any> => import(name);

export interface Child {
  proc: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

export async function waitForHealth(url: string, proc: ChildProcess, pollMs = 5, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`process exited with ${proc.exitCode}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Every server this run started, so a failing run does not leave one behind. */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
});

export function track(proc: ChildProcess): ChildProcess {
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  return proc;
}

export function spawnNode(args: string[], env: Record<string, string>): ChildProcess {
  const proc = track(spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] }));
  let errors = "";
  proc.stderr!.on("data", (d) => (errors = (errors + d).slice(-4000)));
  proc.stdout!.resume();
  proc.once("exit", (code, signal) => {
    if (code && signal === null) process.stderr.write(`child ${args.join(" ")} exited ${code}: ${errors}\n`);
  });
  return proc;
}

export function stopper(proc: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once("exit", () => resolve());
      proc.kill("SIGTERM");
    });
}

export interface Target {
  name: string;
  path: (base: string) => string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
}

/** CPU time (user + system) a process has used so far, in ms (Linux: /proc/<pid>/stat, 100 ticks/s). */
export async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export interface CannonResult {
  rps: number;
  non2xx: number;
  errors: number;
  p99: number;
  /** The server's CPU time per request, in µs: its cost, whatever else the machine is doing. */
  cpuUsPerRequest: number;
}

export async function cannon(server: Child, target: Target, seconds: number, connections = 50): Promise<CannonResult> {
  const base = server.url;
  const { default: autocannon } = await importUntyped("autocannon");
  const cpuBefore = await cpuMs(server.proc.pid!);
  const result = await autocannon({
    url: base + target.path(base),
    connections,
    duration: seconds,
    method: target.method ?? "GET",
    headers: target.headers,
    body: target.body,
  });
  const cpu = (await cpuMs(server.proc.pid!)) - cpuBefore;
  return {
    rps: result.requests.average,
    non2xx: result.non2xx,
    errors: result.errors,
    p99: result.latency.p99,
    cpuUsPerRequest: (cpu * 1000) / Math.max(1, result.requests.total),
  };
}

/** Five measurements after one discarded run (which fills caches: tsx's, Deno's, the OS's). */
export async function fiveAfterWarmUp(measure: () => Promise<number>): Promise<number[]> {
  await measure();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) times.push(await measure());
  return times;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
