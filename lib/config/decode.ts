/**
 * Raw values into typed field values. Two spellings exist: text (environment variables, flags,
 * positional arguments) and YAML values (config and profile files). Both are decoded with valibot
 * and then pass the field's own `check`; any failure is `CONFIG_INVALID_VALUE` naming the field
 * and the source, so the user knows which file, variable or flag to fix.
 */
import * as v from "valibot";
import { ConfigError } from "./errors.ts";
import type { AnyFieldDef, FieldType, FieldValue } from "./section.ts";

/** How a raw value was written. */
export type RawKind = "text" | "yaml";

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, false: false, "1": true, "0": false, yes: true, no: false, on: true, off: false };

const cleanList = (items: string[]) => items.map((s) => s.trim()).filter((s) => s !== "");

/** `a,b` or a JSON list `["a","b"]`: environment variables and flags both accept either. */
function splitList(text: string): string[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("[")) return cleanList(trimmed.split(","));
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return Array.isArray(parsed) && parsed.every((x) => typeof x === "string") ? cleanList(parsed) : undefined;
  } catch {
    return undefined;
  }
}

const TEXT: { [T in FieldType]: v.GenericSchema<string, FieldValue<T>> } = {
  string: v.pipe(v.string(), v.trim()),
  list: v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const list = splitList(dataset.value);
      if (list === undefined) {
        addIssue({ message: "expected a comma-separated list or a JSON list of strings" });
        return NEVER;
      }
      return list;
    }),
  ),
  boolean: v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const value = BOOLEAN_WORDS[dataset.value.trim().toLowerCase()];
      if (value === undefined) {
        addIssue({ message: "expected true or false" });
        return NEVER;
      }
      return value;
    }),
  ),
};

const scalar = v.union([v.string(), v.number()]);

const YAML: { [T in FieldType]: v.GenericSchema<unknown, FieldValue<T>> } = {
  // `null` (an empty `key:`) clears the field; numbers are accepted as their text (ports, ids).
  string: v.pipe(
    v.union([scalar, v.null()], "expected a string"),
    v.transform((x) => (x === null ? "" : String(x).trim())),
  ),
  list: v.pipe(
    v.union([v.array(scalar, "expected a list of strings"), v.string(), v.null()], "expected a list of strings"),
    v.transform((x) => (x === null ? [] : typeof x === "string" ? cleanList(x.split(",")) : cleanList(x.map(String)))),
  ),
  boolean: v.boolean("expected true or false"),
};

function describe(raw: unknown): string {
  if (typeof raw === "string") return JSON.stringify(raw.length > 80 ? raw.slice(0, 77) + "..." : raw);
  if (Array.isArray(raw)) return "a list";
  if (raw === null) return "null";
  return typeof raw === "object" ? "a map" : String(raw);
}

function decodeValue(name: string, field: AnyFieldDef, raw: unknown, kind: RawKind, source: string): FieldValue<FieldType> {
  // A repeated list flag: each occurrence may itself be a comma-separated or JSON list.
  if (kind === "text" && field.type === "list" && Array.isArray(raw)) {
    return raw.flatMap((item) => decodeValue(name, field, item, kind, source) as string[]);
  }
  const schema = (kind === "text" ? TEXT : YAML)[field.type] as v.GenericSchema<unknown, FieldValue<FieldType>>;
  const decoded = v.safeParse(schema, raw);
  if (!decoded.success) {
    throw new ConfigError("CONFIG_INVALID_VALUE", `${name} from ${source}: ${decoded.issues[0].message} (got ${describe(raw)})`, source, name);
  }
  return decoded.output;
}

/** Decodes and checks one raw value for `field`; throws `CONFIG_INVALID_VALUE` on failure. */
export function decodeField(name: string, field: AnyFieldDef, raw: unknown, kind: RawKind, source: string): FieldValue<FieldType> {
  const value = decodeValue(name, field, raw, kind, source);
  if (field.check) {
    const checked = v.safeParse(field.check as v.GenericSchema<unknown>, value);
    if (!checked.success) {
      throw new ConfigError("CONFIG_INVALID_VALUE", `${name} from ${source}: ${checked.issues[0].message}`, source, name);
    }
  }
  return value;
}
