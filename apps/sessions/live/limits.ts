/**
 * The session limits, one row each: the one table the rest is derived from. The `Limits` type
 * (template settings), the defaults and maxima (domain/settings.ts), the request schema and its
 * descriptions (routes/schemas.ts), the sandbox limits a session runs with (session-runtime.ts),
 * the name an outcome reports and the words an execution's error uses all come from here, so a
 * limit is added or changed in one place.
 *
 * Maxima: time limits stop at a day, so wall_ms plus the thread watchdog's grace stays far below
 * the 2^31-1 ms a timer can wait. mem_mb stops at 1024, a sandbox thread's whole QuickJS heap:
 * QuickJS takes its limit as a 32-bit size, and 4096 MiB (2^32 bytes) broke the sandbox at its
 * start.
 */
import type { LimitName as SandboxLimitName, SandboxLimits } from "#lib/sandbox";

interface LimitRow {
  default: number;
  maximum: number;
  /** The request schema's description, before " (default N); at most M". */
  description: string;
  /** The sandbox limit it sets, and the factor from the setting's unit to the sandbox's. */
  sandboxKey: keyof SandboxLimits;
  sandboxScale: number;
  /** How the sandbox names it when it stops an evaluation (lib/sandbox `LimitName`). */
  sandboxName: SandboxLimitName;
  /** How an execution's outcome (and its stored error's `limit`) names it. */
  reportedAs: string;
  /** What it limits, in an execution's error: "execution stopped: <name> (<wording>) limit exceeded". */
  wording: string;
  /** The status of an execution it stops: out of memory is the sandbox's exception, an `error`. */
  ends: "timeout" | "limit_exceeded" | "error";
  /** The closing words of a run it stopped early (a timeout's system event, a startup failure). */
  stopped?: (value: number) => string;
}

export const SESSION_LIMITS = {
  cpu_ms: {
    default: 5000,
    maximum: 86_400_000,
    description: "CPU time an execution may use, ms",
    sandboxKey: "cpuMs",
    sandboxScale: 1,
    sandboxName: "cpu_ms",
    reportedAs: "cpu_ms",
    wording: "CPU time",
    ends: "timeout",
    stopped: (ms: number) => `timed out (cpu_ms limit of ${ms} ms)`,
  },
  wall_ms: {
    default: 30000,
    maximum: 86_400_000,
    description: "wall-clock time an execution may take, ms",
    sandboxKey: "wallMs",
    sandboxScale: 1,
    sandboxName: "wall_ms",
    reportedAs: "wall_ms",
    wording: "wall-clock time",
    ends: "timeout",
    stopped: (ms: number) => `timed out (wall_ms limit of ${ms} ms)`,
  },
  mem_mb: {
    default: 128,
    maximum: 1024,
    description: "memory a session may use, MiB",
    sandboxKey: "memMb",
    sandboxScale: 1,
    sandboxName: "memory",
    reportedAs: "memory",
    wording: "memory",
    ends: "error",
  },
  max_events: {
    default: 1000,
    maximum: 1_000_000,
    description: "events an execution may produce",
    sandboxKey: "maxEvents",
    sandboxScale: 1,
    sandboxName: "max_events",
    reportedAs: "max_events",
    wording: "event count",
    ends: "limit_exceeded",
    stopped: (n: number) => `event limit exceeded (max_events ${n})`,
  },
  max_output_kb: {
    default: 512,
    maximum: 1_048_576,
    description: "console output an execution may produce, KiB of UTF-8",
    sandboxKey: "maxOutputBytes",
    sandboxScale: 1024,
    sandboxName: "max_output_bytes",
    reportedAs: "max_output_kb",
    wording: "output size",
    ends: "limit_exceeded",
    stopped: (kb: number) => `output limit exceeded (max_output_kb ${kb})`,
  },
} as const satisfies Record<string, LimitRow>;

export type LimitName = keyof typeof SESSION_LIMITS;
/** A template's limits, one number per row. */
export type Limits = { -readonly [K in LimitName]: number };
/** The name an outcome reports for the limit that ended it. */
export type ReportedLimit = (typeof SESSION_LIMITS)[LimitName]["reportedAs"];

/** The rows' names, in the table's order (the order of the schema and the OpenAPI document). */
export const LIMIT_NAMES = Object.keys(SESSION_LIMITS) as LimitName[];

const byColumn = <T>(column: (row: LimitRow) => T) =>
  Object.fromEntries(LIMIT_NAMES.map((name) => [name, column(SESSION_LIMITS[name])])) as { [K in LimitName]: T };

/** The largest value of each limit (docs/sessions.md, "Settings"; the request schema enforces them). */
export const LIMIT_MAXIMA: Readonly<Limits> = Object.freeze(byColumn((row) => row.maximum));

/** The spec's defaults. */
export const defaultLimits = (): Limits => byColumn((row) => row.default);

/** The sandbox limits a session's limits set. */
export function sandboxLimits(limits: Limits): Partial<SandboxLimits> {
  const out: Partial<SandboxLimits> = {};
  for (const name of LIMIT_NAMES) out[SESSION_LIMITS[name].sandboxKey] = limits[name] * SESSION_LIMITS[name].sandboxScale;
  return out;
}

/** How an outcome reports each limit, by the sandbox's name for it. */
const reportedBySandboxName = new Map<SandboxLimitName, ReportedLimit>(
  LIMIT_NAMES.map((name) => [SESSION_LIMITS[name].sandboxName, SESSION_LIMITS[name].reportedAs]),
);
/** The name of each limit by how an outcome reports it. */
const nameByReported = new Map<string, LimitName>(LIMIT_NAMES.map((name) => [SESSION_LIMITS[name].reportedAs, name]));

/** How an outcome reports the limit the sandbox named. */
export function reportedLimit(sandboxName: SandboxLimitName): ReportedLimit {
  return reportedBySandboxName.get(sandboxName)!;
}

/** "cpu_ms (CPU time)": the limit an outcome reported, in an execution's error. */
export function limitWording(reported: string): string {
  const name = nameByReported.get(reported);
  return name ? `${name} (${SESSION_LIMITS[name].wording})` : reported;
}

/**
 * The words for a run a limit stopped early, by the status it ended with: the row the sandbox
 * named, or else the first row of that status (cpu_ms for a timeout, max_events for an output limit).
 */
export function stoppedWording(status: "timeout" | "limit_exceeded", sandboxName: SandboxLimitName | undefined, limits: Limits): string {
  const candidates = LIMIT_NAMES.filter((name) => SESSION_LIMITS[name].ends === status);
  const name = candidates.find((n) => SESSION_LIMITS[n].sandboxName === sandboxName) ?? candidates[0]!;
  const row: LimitRow = SESSION_LIMITS[name];
  return row.stopped!(limits[name]);
}
