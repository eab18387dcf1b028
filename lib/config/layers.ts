/**
 * Sources as layers of assignments, and their resolution. Each source turns into a list of
 * `Assignment`s (field, raw value, where it came from); resolution applies them lowest first, so
 * the last one for a field wins and its source is recorded as that field's provenance.
 *
 * Precedence, lowest to highest: section defaults < profiles < config files < environment <
 * positional arguments < CLI flags. Source labels: `default`, `profile:<name>`, `config:<path>`,
 * `env:<VAR>`, `positional:<n>`, `flag:--<name>`.
 */
import { decodeField, type RawKind } from "./decode.ts";
import { ConfigError } from "./errors.ts";
import type { ParsedArgs } from "./flags.ts";
import { type AnyFieldDef, envName, fieldNames, flagName, type SectionDef, type SectionValues } from "./section.ts";

export interface Assignment {
  field: string;
  raw: unknown;
  kind: RawKind;
  source: string;
}

export interface Resolved<F extends Record<string, AnyFieldDef> = Record<string, AnyFieldDef>> {
  values: SectionValues<F>;
  /** Per field, the source that set its value. */
  sources: { -readonly [K in keyof F]: string };
}

export type Env = Record<string, string | undefined>;

/** The section's map inside a parsed config or profile document (`null` or absent: nothing). */
export function fromSectionMap(section: SectionDef, map: unknown, source: string): Assignment[] {
  if (map === null || map === undefined) return [];
  if (typeof map !== "object" || Array.isArray(map)) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `${section.key} in ${source} must be a map of field names to values`, source);
  }
  return Object.entries(map).map(([field, raw]) => {
    if (!Object.hasOwn(section.fields, field)) {
      throw new ConfigError(
        "CONFIG_UNKNOWN_FIELD",
        `unknown field "${field}" under ${section.key} in ${source} (known: ${fieldNames(section).join(", ")})`,
        source,
        field,
      );
    }
    return { field, raw, kind: "yaml" as const, source };
  });
}

/** Environment variables; an empty variable counts as unset, unless its field says otherwise. */
export function fromEnv(section: SectionDef, env: Env): Assignment[] {
  return fieldNames(section).flatMap((field) => {
    const name = envName(section, field);
    const raw = name === undefined ? undefined : env[name];
    const unset = raw === undefined || (raw.trim() === "" && !section.fields[field]!.emptyEnvIsValue);
    return unset ? [] : [{ field, raw, kind: "text" as const, source: `env:${name}` }];
  });
}

/** Positional arguments (after the command word); more than the section takes is an error. */
export function fromPositionals(section: SectionDef, positionals: readonly string[]): Assignment[] {
  const byIndex = new Map(
    fieldNames(section).flatMap((f) => (section.fields[f]!.positional === undefined ? [] : [[section.fields[f]!.positional!, f] as const])),
  );
  return positionals.map((raw, i) => {
    const field = byIndex.get(i);
    if (field === undefined) {
      throw new ConfigError("CONFIG_TOO_MANY_ARGUMENTS", `unexpected argument "${raw}"`, `positional:${i}`);
    }
    return { field, raw, kind: "text" as const, source: `positional:${i}` };
  });
}

/** Flags of the section's fields; other flags in `args` are left to the command. */
export function fromFlags(section: SectionDef, args: ParsedArgs): Assignment[] {
  return fieldNames(section).flatMap((field) => {
    const name = flagName(section, field);
    const values = name === undefined ? undefined : args.flags.get(name);
    if (values === undefined || values.length === 0) return [];
    // Lists collect every occurrence; a single-valued field takes the last one.
    const raw = section.fields[field]!.type === "list" ? values : values.at(-1);
    return [{ field, raw, kind: "text" as const, source: `flag:--${name}` }];
  });
}

/** Applies assignments over the defaults, lowest precedence first. */
export function resolveSection<F extends Record<string, AnyFieldDef>>(section: SectionDef<F>, assignments: readonly Assignment[]): Resolved<F> {
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const field of fieldNames(section)) {
    const def = section.fields[field]!;
    values[field] = Array.isArray(def.default) ? [...def.default] : def.default;
    sources[field] = "default";
  }
  for (const a of assignments) {
    values[a.field] = decodeField(a.field, section.fields[a.field]!, a.raw, a.kind, a.source);
    sources[a.field] = a.source;
  }
  return { values: values as SectionValues<F>, sources: sources as Resolved<F>["sources"] };
}
