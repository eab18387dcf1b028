/** Helpers for the live layer's tests: a session spec with the spec's default settings. */
import { defaultSettings } from "../domain/settings.ts";
import type { CapabilitySpec, ExecutionOutcome, ExecutionRequest, LiveEvent, LiveRuntimes, SessionSpec, Settings } from "./types.ts";

export type SpecOverrides = Omit<Partial<SessionSpec>, "settings"> & {
  settings?: { [G in keyof Settings]?: Partial<Settings[G]> };
};

let counter = 0;

export function sessionSpec(overrides: SpecOverrides = {}): SessionSpec {
  const d = defaultSettings();
  const s = overrides.settings ?? {};
  return {
    sessionId: overrides.sessionId ?? `s${++counter}`,
    worktreePath: overrides.worktreePath ?? "/work/tree",
    capabilities: overrides.capabilities ?? [],
    modules: overrides.modules ?? [],
    libraries: overrides.libraries ?? [],
    startupFiles: overrides.startupFiles ?? [],
    settings: {
      limits: { ...d.limits, ...s.limits },
      resolver: { ...d.resolver, ...s.resolver },
      runtime: { ...d.runtime, ...s.runtime },
    },
  };
}

export const capability = (kind: CapabilitySpec["kind"], name: string, config: Record<string, unknown> = {}, enabled = true): CapabilitySpec => ({
  kind,
  name,
  enabled,
  config,
});

export const repl = (input: string): ExecutionRequest => ({ kind: "repl", input });

export const runFile = (path: string, source: string, args: Record<string, unknown> = {}, env: Record<string, unknown> = {}): ExecutionRequest => ({
  kind: "run_file",
  path,
  source,
  args,
  env,
});

/** Runs one execution and collects its events. */
export async function collect(
  runtimes: Pick<LiveRuntimes, "execute">,
  sessionId: string,
  request: ExecutionRequest,
): Promise<{ outcome: ExecutionOutcome; events: LiveEvent[] }> {
  const events: LiveEvent[] = [];
  const outcome = await runtimes.execute(sessionId, request, (e) => events.push(e));
  return { outcome, events };
}

/**
 * Runs `work` while a 10 ms timer ticks on this thread; returns how often it ran. A thread blocked
 * for the whole of `work` ticks once or not at all; a free one about every 10 ms, and still dozens
 * of times a second on a loaded machine: a count, where a latency figure breaks under load.
 */
export async function timerTicks<T>(work: Promise<T>): Promise<{ result: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  try {
    return { result: await work, ticks };
  } finally {
    clearInterval(timer);
  }
}

/** Whether `promise` has settled by now (after the microtasks already queued). */
export async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol("pending");
  return (await Promise.race([promise.then(() => true, () => true), Promise.resolve(pending)])) !== pending;
}
