/**
 * Config files and profiles files: YAML documents read through a `readTextFile` parameter (so this
 * module stays runtime-free) and turned into assignments for one section.
 *
 * - A config file is a map of section keys to field maps: `oidc: {issuer: ..., redirect-uris: [...]}`.
 * - A profiles file is a map of profile names to such maps: `staging: {oidc: {...}}`.
 * Top-level keys (and slugs inside a profile) must be known sections, so a typo is an error rather
 * than a silently ignored block.
 */
import { ConfigError } from "./errors.ts";
import { type Assignment, type Env, fromSectionMap } from "./layers.ts";
import type { SectionDef } from "./section.ts";
import { parseYaml } from "./yaml.ts";

export type ReadTextFile = (path: string) => Promise<string | undefined>;

const isMap = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

async function parseDocument(text: string, what: string, code: "CONFIG_FILE_INVALID" | "PROFILES_FILE_INVALID", source: string): Promise<unknown> {
  try {
    return await parseYaml(text);
  } catch (err) {
    const first = (err as Error).message.split("\n")[0];
    throw new ConfigError(code, `${what} is not valid YAML: ${first}`, source);
  }
}

/** The assignments of `section` in a map of section keys (a config file, or one profile). */
function sectionsOf(
  section: SectionDef,
  doc: unknown,
  knownSections: readonly string[],
  where: string,
  source: string,
  code: "CONFIG_FILE_INVALID" | "PROFILES_FILE_INVALID",
): Assignment[] {
  if (doc === null || doc === undefined) return [];
  if (!isMap(doc)) throw new ConfigError(code, `${where} must be a map of sections (e.g. "${section.key}:")`, source);
  for (const key of Object.keys(doc)) {
    if (!knownSections.includes(key)) {
      throw new ConfigError("CONFIG_UNKNOWN_SECTION", `unknown section "${key}" in ${where} (known: ${knownSections.join(", ")})`, source, key);
    }
  }
  return fromSectionMap(section, doc[section.key], source);
}

/** One `--config-file`: missing or malformed files are errors (they were asked for by name). */
export async function readConfigFile(
  section: SectionDef,
  path: string,
  read: ReadTextFile,
  knownSections: readonly string[] = [section.key],
): Promise<Assignment[]> {
  const source = `config:${path}`;
  const text = await read(path);
  if (text === undefined) throw new ConfigError("CONFIG_FILE_NOT_FOUND", `config file ${path} does not exist`, source);
  const doc = await parseDocument(text, `config file ${path}`, "CONFIG_FILE_INVALID", source);
  return sectionsOf(section, doc, knownSections, `config file ${path}`, source, "CONFIG_FILE_INVALID");
}

/** The profile asked for, and by whom. */
export interface ProfileChoice {
  name: string;
  /** `default`, `env:<VAR>` or `flag:--profile`. */
  source: string;
}

export const DEFAULT_PROFILE = "default";

/** `--profile` beats the environment variable, which beats `default` (docs/idp-config.md#profiles---profile-name-env-idp_profile). */
export function chooseProfile(flagValue: string | undefined, env: Env, envVar: string): ProfileChoice {
  const fromFlag = flagValue?.trim();
  if (fromFlag) return { name: fromFlag, source: "flag:--profile" };
  const fromEnv = env[envVar]?.trim();
  if (fromEnv) return { name: fromEnv, source: `env:${envVar}` };
  return { name: DEFAULT_PROFILE, source: "default" };
}

/** `$XDG_CONFIG_HOME/<app>/profiles.yaml`, else `<home>/.config/<app>/profiles.yaml`. */
export function profilesFilePath(app: string, dirs: { xdgConfigHome?: string; home?: string }): string {
  const base = dirs.xdgConfigHome?.trim() || `${(dirs.home?.trim() || "~").replace(/\/+$/, "")}/.config`;
  return `${base.replace(/\/+$/, "")}/${app}/profiles.yaml`;
}

/**
 * The chosen profile's assignments for `section`. The `default` profile is optional: a missing
 * file, or a file without a `default` entry, loads nothing. Any other profile must exist.
 */
export async function readProfile(
  section: SectionDef,
  choice: ProfileChoice,
  path: string,
  read: ReadTextFile,
  knownSections: readonly string[] = [section.key],
): Promise<Assignment[]> {
  const source = `profile:${choice.name}`;
  const optional = choice.name === DEFAULT_PROFILE;
  const text = await read(path);
  if (text === undefined) {
    if (optional) return [];
    throw new ConfigError(
      "PROFILES_FILE_MISSING",
      `profile "${choice.name}" (from ${choice.source}) needs the profiles file ${path}, which does not exist`,
      choice.source,
    );
  }
  const doc = await parseDocument(text, `profiles file ${path}`, "PROFILES_FILE_INVALID", `profiles:${path}`);
  if (doc !== null && doc !== undefined && !isMap(doc)) {
    throw new ConfigError("PROFILES_FILE_INVALID", `profiles file ${path} must be a map of profile names`, `profiles:${path}`);
  }
  const profiles = (doc ?? {}) as Record<string, unknown>;
  if (!Object.hasOwn(profiles, choice.name)) {
    if (optional) return [];
    const known = Object.keys(profiles);
    throw new ConfigError(
      "PROFILE_NOT_FOUND",
      `profile "${choice.name}" (from ${choice.source}) is not in ${path} (${known.length ? `profiles there: ${known.join(", ")}` : "it defines no profiles"})`,
      choice.source,
    );
  }
  return sectionsOf(section, profiles[choice.name], knownSections, `profile "${choice.name}" in ${path}`, source, "PROFILES_FILE_INVALID");
}
