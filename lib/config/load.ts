/**
 * One call that loads a section from every source in precedence order and reports, per field, the
 * source that set it. The command line decides which files and which profile; this module only
 * reads them (through `readTextFile`) and applies the layers.
 */
import { chooseProfile, type ProfileChoice, profilesFilePath, readConfigFile, readProfile, type ReadTextFile } from "./files.ts";
import type { ParsedArgs } from "./flags.ts";
import { type Env, fromEnv, fromFlags, fromPositionals, type Resolved, resolveSection } from "./layers.ts";
import type { AnyFieldDef, SectionDef } from "./section.ts";

export interface LoadSectionOptions<F extends Record<string, AnyFieldDef>> {
  section: SectionDef<F>;
  /** Directory name under the config home (`idp` -> `~/.config/idp/profiles.yaml`). */
  app: string;
  /** Parsed command line: flags, and positional arguments after the command word. */
  args: ParsedArgs;
  env: Env;
  /** Reads a UTF-8 file, `undefined` when missing; relative paths are the caller's business. */
  readTextFile: ReadTextFile;
  /** `$XDG_CONFIG_HOME` and `$HOME`; default: taken from `env`. */
  dirs?: { xdgConfigHome?: string; home?: string };
  /** Top-level keys allowed in config and profile files; default only this section's key. */
  knownSections?: readonly string[];
  /** Flag naming config files (repeatable); default `config-file`. */
  configFileFlag?: string;
  /** Flag and env var choosing the profile; default `profile` and `<envPrefix>PROFILE`. */
  profileFlag?: string;
  profileEnv?: string;
}

export interface LoadedSection<F extends Record<string, AnyFieldDef>> extends Resolved<F> {
  profile: ProfileChoice;
  profilesFile: string;
  configFiles: string[];
}

export async function loadSection<F extends Record<string, AnyFieldDef>>(options: LoadSectionOptions<F>): Promise<LoadedSection<F>> {
  const { section, args, env } = options;
  const known = options.knownSections ?? [section.key];
  const dirs = options.dirs ?? { xdgConfigHome: env.XDG_CONFIG_HOME, home: env.HOME };
  const profile = chooseProfile(args.flags.get(options.profileFlag ?? "profile")?.at(-1), env, options.profileEnv ?? `${section.envPrefix}PROFILE`);
  const profilesFile = profilesFilePath(options.app, dirs);
  const configFiles = args.flags.get(options.configFileFlag ?? "config-file") ?? [];

  const assignments = [...(await readProfile(section, profile, profilesFile, options.readTextFile, known))];
  for (const path of configFiles) assignments.push(...(await readConfigFile(section, path, options.readTextFile, known)));
  assignments.push(...fromEnv(section, env), ...fromPositionals(section, args.positionals), ...fromFlags(section, args));

  return { ...resolveSection(section, assignments), profile, profilesFile, configFiles };
}
