/**
 * Every long-lived process a test starts (a service, wrangler, a CLI run), each in a process group
 * of its own, so that one signal ends it with everything it started (wrangler's workerd, Deno's
 * workers). A group ends on `stop()`; at the end of the test file that started it, whatever its
 * hooks did (`test/runtimes/setup.ts`); and when the test worker exits. After the whole run,
 * `scripts/test.mjs` fails the run if anything carrying the run's mark (`RUN_MARK` in its
 * environment) is still alive, and ends it.
 *
 * Waiting for a process is waiting for its readiness or its exit, whichever comes first: no fixed
 * deadline that is too short on a busy machine and too long once the process has died. The bound is
 * the hook's or test's own timeout.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** The environment variable that marks every process of one `npm test` run (scripts/test.mjs). */
export const RUN_MARK = "DEVSERVICES_TEST_RUN";

export interface TrackedProcess {
  readonly child: ChildProcess;
  /** The process group: the child's pid (it leads its own group). */
  readonly pgid: number;
  /** Everything the process printed so far, both streams as they came. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Settles when the child itself has exited. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  /**
   * Ends the whole group: `signal` (SIGTERM: a graceful stop), SIGKILL after `graceMs`; resolves
   * once no process of the group is left alive.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

export interface StartProcessOptions {
  cwd?: string;
  /** The child's whole environment (the run's mark is added). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Called with each piece of output as it comes. */
  onOutput?(text: string): void;
}

const live = new Set<TrackedProcess>();

export function startProcess(bin: string, args: string[], options: StartProcessOptions = {}): TrackedProcess {
  const env = { ...(options.env ?? process.env) };
  if (process.env[RUN_MARK]) env[RUN_MARK] = process.env[RUN_MARK];
  const child = spawn(bin, args, { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  const streams = { stdout: "", stderr: "" };
  const collect = (stream: keyof typeof streams) => (d: Buffer) => {
    const text = d.toString();
    log += text;
    streams[stream] += text;
    options.onOutput?.(text);
  };
  child.stdout!.on("data", collect("stdout"));
  child.stderr!.on("data", collect("stderr"));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    // A binary that cannot be started: no "exit" follows an "error" from spawn.
    child.once("error", (err) => {
      log += `\n${err.message}`;
      resolve({ code: -1, signal: null });
    });
  });
  const pgid = child.pid ?? -1;
  const tracked: TrackedProcess = {
    child,
    pgid,
    output: () => log,
    stdout: () => streams.stdout,
    stderr: () => streams.stderr,
    exit,
    hasExited: () => child.exitCode !== null || child.signalCode !== null || pgid < 0,
    async stop(signal = "SIGTERM", graceMs = 3000) {
      if (pgid > 0) {
        signalGroup(pgid, signal);
        const killed = setTimeout(() => signalGroup(pgid, "SIGKILL"), graceMs);
        try {
          await untilGroupGone(pgid);
        } finally {
          clearTimeout(killed);
        }
      }
      live.delete(tracked);
    },
  };
  if (pgid > 0) live.add(tracked);
  return tracked;
}

/**
 * Runs a command to its end, as `execFile` would, but tracked: a test that times out does not
 * leave it running. Past `timeoutMs` (default: none but the test's own) its group is ended and the
 * code is null.
 */
export async function runToEnd(
  bin: string,
  args: string[],
  options: StartProcessOptions & { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = startProcess(bin, args, options);
  const closed = new Promise((r) => proc.child.once("close", r));
  const timer = options.timeoutMs ? setTimeout(() => void proc.stop("SIGKILL"), options.timeoutMs) : undefined;
  const { code } = await proc.exit;
  clearTimeout(timer);
  // The group may have more members than the one that exited (a server it started).
  await proc.stop();
  // Output still in the pipes when "exit" came is read once they close.
  if (proc.pgid > 0) await closed;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/** Ends every process this test worker started and has not stopped (a file's teardown). */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop()));
}

// The worker itself going away (a crash, vitest ending it) still takes its groups along.
process.once("exit", () => {
  for (const p of live) signalGroup(p.pgid, "SIGKILL");
});

/**
 * Polls `ready` until it answers true, or throws once the process has exited first (with its
 * output, so a failure says why). Each probe is bounded by the caller (a fetch with its own
 * timeout); the wait as a whole by the hook's timeout.
 */
export async function waitUntilReady(proc: TrackedProcess, ready: () => Promise<boolean>, what: string): Promise<void> {
  let exited = proc.hasExited();
  void proc.exit.then(() => (exited = true));
  // A start that neither answers nor exits for this long says what it printed, once: if the hook
  // then times out, the reason is in the log (the process is ended with the file).
  const slow = setTimeout(
    () => console.warn(`${what} (pid ${proc.pgid}) not ready after ${SLOW_START_MS / 1000} s; its output so far:\n${proc.output()}`),
    SLOW_START_MS,
  );
  try {
    await pollUntilReady(proc, ready, what, () => exited);
  } finally {
    clearTimeout(slow);
  }
}

const SLOW_START_MS = 30_000;

async function pollUntilReady(proc: TrackedProcess, ready: () => Promise<boolean>, what: string, exited: () => boolean): Promise<void> {
  for (let pause = 25;; pause = Math.min(pause * 2, 250)) {
    if (exited()) throw new Error(`${what} exited before it was ready:\n${proc.output()}`);
    if (await ready().catch(() => false)) return;
    if (exited()) throw new Error(`${what} exited before it was ready:\n${proc.output()}`);
    await Promise.race([new Promise((r) => setTimeout(r, pause)), proc.exit]);
  }
}

/** True when `url` answers with a 2xx (its body read, so the connection is freed). */
export async function answersOk(url: string, init: RequestInit = {}): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000), ...init });
  await res.arrayBuffer();
  return res.ok;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone
  }
}

async function untilGroupGone(pgid: number): Promise<void> {
  for (let pause = 10; groupAlive(pgid); pause = Math.min(pause * 2, 100)) await new Promise((r) => setTimeout(r, pause));
}

/**
 * Is any process of the group still running? A member that has exited but whose parent has not
 * reaped it yet (a zombie) runs nothing and does not count.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  // Without /proc (not Linux) the signal's answer is all there is.
  if (!procReadable()) return true;
  return procStats().some((s) => s.pgrp === pgid && s.state !== "Z");
}

interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
}

function procReadable(): boolean {
  try {
    readdirSync("/proc/self");
    return true;
  } catch {
    return false;
  }
}

/** Every process's state and group, from /proc (empty where there is none). */
export function procStats(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push({ pid: Number(name), state: state!, pgrp: Number(pgrp) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
