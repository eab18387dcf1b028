/**
 * The `env` module and the base of run-file's `env` global: the host environment variables that
 * enabled `env` capabilities allow. A capability's name is a variable (`API_URL`) or a prefix
 * pattern (`APP_*`, and `*` for all); nothing else of the host environment is visible.
 */
import type { NativeModule } from "#lib/sandbox";

export function visibleEnv(hostEnv: Record<string, string | undefined>, patterns: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pattern of patterns) {
    const prefix = pattern.endsWith("*") ? pattern.slice(0, -1) : undefined;
    for (const [key, value] of Object.entries(hostEnv)) {
      if (value !== undefined && (prefix === undefined ? key === pattern : key.startsWith(prefix))) out[key] = value;
    }
  }
  return out;
}

/** The module: the visible variables as its (frozen) properties. */
export function envModule(env: Record<string, string>): NativeModule {
  return { values: { ...env } };
}
