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

/** Runs `work` while a 10 ms timer probes this thread's event loop; returns its worst lateness. */
export async function timerLateness<T>(work: Promise<T>): Promise<{ result: T; worstMs: number }> {
  let worst = 0;
  let running = true;
  const probe = (async () => {
    while (running) {
      const t = performance.now();
      await new Promise((r) => setTimeout(r, 10));
      worst = Math.max(worst, performance.now() - t - 10);
    }
  })();
  try {
    return { result: await work, worstMs: worst };
  } finally {
    running = false;
    await probe;
  }
}
