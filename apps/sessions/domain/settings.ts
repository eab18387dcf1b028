/**
 * Template settings: the spec's defaults, and the deep merge a settings PATCH applies. Values are
 * validated by the request schema (routes/schemas.ts) before they get here; lists replace, objects
 * merge key by key.
 */
import type { Settings } from "../live/types.ts";

export type { Settings };

/** The largest value of each limit (docs/sessions.md, "Settings"; the request schema enforces
 * them). Time limits stop at a day, so wall_ms plus the watchdog's grace stays far below the
 * 2^31-1 ms a timer can wait. mem_mb stops at 1024, a sandbox thread's whole QuickJS heap: QuickJS
 * takes its limit as a 32-bit size, and 4096 MiB (2^32 bytes) broke the sandbox at its start. */
export const LIMIT_MAXIMA = {
  cpu_ms: 86_400_000,
  wall_ms: 86_400_000,
  mem_mb: 1024,
  max_events: 1_000_000,
  max_output_kb: 1_048_576,
} as const satisfies Settings["limits"];

export function defaultSettings(): Settings {
  return {
    limits: { cpu_ms: 5000, wall_ms: 30000, mem_mb: 128, max_events: 1000, max_output_kb: 512 },
    resolver: { roots: [], extensions: [".js", ".mjs"], allow_absolute_repo_imports: false },
    runtime: { esm: false, strict: false, console: true },
  };
}

/** A partial settings document: any group, any field of it. */
export type SettingsPatch = { [G in keyof Settings]?: Partial<Settings[G]> };

export function mergeSettings(current: Settings, patch: SettingsPatch): Settings {
  return {
    limits: { ...current.limits, ...patch.limits },
    resolver: { ...current.resolver, ...patch.resolver },
    runtime: { ...current.runtime, ...patch.runtime },
  };
}

/**
 * Settings as stored (JSON text) back to a full document. Rows written by an older version may
 * lack a field added later: the default fills it, so a stored document is never half a shape. A
 * limit stored before limits had maxima is read as its maximum.
 */
export function parseStoredSettings(text: string): Settings {
  const settings = mergeSettings(defaultSettings(), JSON.parse(text) as SettingsPatch);
  for (const name of Object.keys(LIMIT_MAXIMA) as (keyof Settings["limits"])[]) {
    const value = settings.limits[name];
    if (typeof value === "number" && value > LIMIT_MAXIMA[name]) settings.limits[name] = LIMIT_MAXIMA[name];
  }
  return settings;
}
