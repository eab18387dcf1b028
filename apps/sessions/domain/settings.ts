/**
 * Template settings: the spec's defaults, and the deep merge a settings PATCH applies. Values are
 * validated by the request schema (routes/schemas.ts) before they get here; lists replace, objects
 * merge key by key. The limits' defaults and maxima are the limits table's (live/limits.ts).
 */
import { defaultLimits, LIMIT_MAXIMA, LIMIT_NAMES } from "../live/limits.ts";
import type { Settings } from "../live/types.ts";

export type { Settings };
export { LIMIT_MAXIMA };

export function defaultSettings(): Settings {
  return {
    limits: defaultLimits(),
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
  for (const name of LIMIT_NAMES) {
    const value = settings.limits[name];
    if (typeof value === "number" && value > LIMIT_MAXIMA[name]) settings.limits[name] = LIMIT_MAXIMA[name];
  }
  return settings;
}
