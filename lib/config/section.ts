/**
 * A configuration section: a named group of fields (`oidc`, ...), each with a type, a default, and
 * the names it goes by in every source: an environment variable, a command-line flag, the key in
 * config and profile files (the field name itself, which is also the flag name), and optionally a
 * positional argument. Runtime-free; the CLIs of every service build on it.
 */
import * as v from "valibot";
import { parseListenAddress } from "#lib/runtime";

export type FieldType = "string" | "list" | "boolean";
export type FieldValue<T extends FieldType> = T extends "string" ? string : T extends "list" ? string[] : boolean;

export interface FieldDef<T extends FieldType = FieldType> {
  type: T;
  default: FieldValue<T>;
  /** One line for `--help` and the docs. */
  description: string;
  /** Environment variable; default `<envPrefix><FIELD_NAME>`; `false` for none. */
  env?: string | false;
  /** Flag name without dashes; default the field name; `false` for none. */
  flag?: string | false;
  /** Index among the command's positional arguments, if the field can be given that way. */
  positional?: number;
  /** Shown only as a prefix when printed. */
  secret?: boolean;
  /** An empty environment variable sets the empty value instead of counting as unset (a list
   * where empty means none, and where the variable always meant that). */
  emptyEnvIsValue?: boolean;
  /** Extra validation of a decoded value (a valibot schema, so messages stay uniform). */
  check?: v.GenericSchema<FieldValue<T>>;
}

export type AnyFieldDef = FieldDef<"string"> | FieldDef<"list"> | FieldDef<"boolean">;

export interface SectionDef<F extends Record<string, AnyFieldDef> = Record<string, AnyFieldDef>> {
  /** Top-level key in config files and section slug in profiles. */
  key: string;
  /** Prefix of the derived environment variable names, e.g. `IDP_`. */
  envPrefix: string;
  fields: F;
}

export type SectionValues<F extends Record<string, AnyFieldDef>> = { -readonly [K in keyof F]: F[K] extends FieldDef<infer T> ? FieldValue<T> : never };

type FieldOptions<T extends FieldType> = Omit<FieldDef<T>, "type">;

export const stringField = (options: FieldOptions<"string">): FieldDef<"string"> => ({ type: "string", ...options });
export const listField = (options: FieldOptions<"list">): FieldDef<"list"> => ({ type: "list", ...options });
export const booleanField = (options: FieldOptions<"boolean">): FieldDef<"boolean"> => ({ type: "boolean", ...options });

/** A field's check by a parser the value must get through: whatever it throws, `message` is the issue. */
export const acceptedBy = (parse: (value: string) => unknown, message: string) =>
  v.pipe(
    v.string(),
    v.check((value: string) => {
      try {
        parse(value);
        return true;
      } catch {
        return false;
      }
    }, message),
  );

/** A `HOST:PORT` listen address field's check (parseListenAddress decides). */
export const listenAddressCheck = acceptedBy(parseListenAddress, "expected HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080");

/** A whole number from `min` to `max`, written in digits (kept as text, as the field is). */
export const wholeNumberCheck = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.check((s: string) => /^\d+$/.test(s) && Number(s) >= min && Number(s) <= max, `expected a whole number from ${min} to ${max}`),
  );

export function defineSection<F extends Record<string, AnyFieldDef>>(section: SectionDef<F>): SectionDef<F> {
  return section;
}

/** `redirect-uris` -> `IDP_REDIRECT_URIS`, unless the field names its own variable. */
export function envName(section: SectionDef, field: string): string | undefined {
  const def = section.fields[field]!;
  if (def.env === false) return undefined;
  return def.env ?? section.envPrefix + field.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

export function flagName(section: SectionDef, field: string): string | undefined {
  const def = section.fields[field]!;
  if (def.flag === false) return undefined;
  return def.flag ?? field;
}

export function fieldNames(section: SectionDef): string[] {
  return Object.keys(section.fields);
}

/** Each field's flag as the command line's parser takes it (`FlagSpecs`): a boolean field takes no value. */
export function sectionFlags(section: SectionDef): Record<string, { boolean?: boolean }> {
  return Object.fromEntries(
    fieldNames(section).flatMap((field) => {
      const flag = flagName(section, field);
      return flag === undefined ? [] : [[flag, section.fields[field]!.type === "boolean" ? { boolean: true } : {}]];
    }),
  );
}

/**
 * The section's fields for `--help`, one entry each: the flag and the environment variable in
 * columns of the given widths, the default (`shownDefault` where a value would mislead), and the
 * description on the next line.
 */
export function sectionHelp(
  section: SectionDef,
  widths: { flag: number; env: number },
  shownDefault: (field: string) => string | undefined = () => undefined,
): string {
  return fieldNames(section)
    .map((field) => {
      const def = section.fields[field]!;
      const fallback = shownDefault(field) ?? (String(def.default) || '""');
      const flag = flagName(section, field);
      return `  ${(flag === undefined ? "" : `--${flag}`).padEnd(widths.flag)} ${
        (envName(section, field) ?? "").padEnd(widths.env)
      } ${fallback}\n      ${def.description}`;
    })
    .join("\n");
}
