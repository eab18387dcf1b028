/**
 * What the fuzz suites send (issue #20): hostile values (deep nesting, nasty strings and numbers),
 * valid values generated from a JSON Schema, and the mutations that turn a valid request into a
 * hostile one: missing and extra fields, wrong types, broken encodings on the wire. Not a test
 * file; the suites import it through fuzz.ts.
 */
import fc from "fast-check";

// ---------------------------------------------------------------------------------------------
// Hostile values

/** `[[[...]]]` or `{"a":{"a":...}}` as JSON text, built without recursion. */
export function nestedText(depth: number, kind: "array" | "object" = "array"): string {
  return kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
}

/** Marks a value that must be spliced into the JSON text as is (a nesting too deep to build). */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): string {
    return `\u0000RAW${rawStore.push(this.text) - 1}\u0000`;
  }
}
const rawStore: string[] = [];

/** JSON.stringify, with RawJson values spliced in as text. */
export function toJsonText(value: unknown): string {
  const start = rawStore.length;
  const text = JSON.stringify(value) ?? "null";
  const out = text.replace(/"\\u0000RAW(\d+)\\u0000"/g, (_, i: string) => rawStore[Number(i)]!);
  rawStore.length = start;
  return out;
}

/** Depths around the limit (64) and far past it (where recursive code runs out of stack). */
export const DEPTHS = [2, 63, 64, 65, 100, 1000, 3500, 5000, 20_000];

export const deepValue = fc.record({ depth: fc.constantFrom(...DEPTHS), kind: fc.constantFrom("array" as const, "object" as const) }).map(({ depth, kind }) =>
  new RawJson(nestedText(depth, kind))
);

/** Strings that have broken things: controls, NUL, lone surrogates, bidi, very long names. */
export const nastyString = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\r\n",
    "\u0007\u001b[31m",
    "\ud800",
    "\udfff\ud800",
    "\u202e\u2066",
    "\ufeff",
    "%00",
    "%2e%2e/%2e%2e/etc/passwd",
    "../../etc/passwd",
    "/etc/passwd",
    "..\\..\\x",
    "a/./b//c",
    "C:\\x",
    "😀".repeat(100),
    "é".repeat(200),
    "n".repeat(256),
    "x".repeat(10_000),
    "__proto__",
    "constructor",
    "null",
    "00000000-0000-0000-0000-000000000000",
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("\u0000", "\u0001", "\u001f", "\u007f", "\u0085", "\u2028", "a", "/", ".", "%"), maxLength: 30 }),
);

/** Numbers at the edges of what a server might mishandle. */
export const nastyNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    0.5,
    -1.5,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    2 ** 53 - 1,
    2 ** 53 + 2,
    -(2 ** 53),
    1e21,
    1e308,
    -1e308,
    5e-324,
    86_400_000,
    86_400_001,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any JSON value, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  nastyNumber,
  nastyString,
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** A value of a type other than the schema's (or any value, when the schema names none). */
export const wrongTyped = fc.oneof(anyJson, deepValue, fc.constant(new RawJson(`"${"h".repeat(200_000)}"`)));

// ---------------------------------------------------------------------------------------------
// Values from a JSON Schema (the subset the services' documents use)

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
};

export interface SchemaContext {
  /** Resolves a `$ref`. */
  resolve?: (ref: string) => JsonSchema;
  /** Values to use for a field by name, most of the time (ids of fixtures, existing paths). */
  known?: Record<string, fc.Arbitrary<unknown>>;
}

const PATTERN_EXAMPLES: Record<string, fc.Arbitrary<string>> = {
  "^\\.[A-Za-z0-9]+$": fc.constantFrom(".js", ".mjs", ".cjs", ".ts"),
  "^0*[1-9][0-9]*$": fc.integer({ min: 1, max: 2000 }).map(String),
  "^[0-9]+$": fc.integer({ min: 0, max: 100 }).map(String),
};

/** Valid values of `schema`. Strings are short (validity, not size, is the point here). */
export function fromSchema(schema: JsonSchema, ctx: SchemaContext = {}, name?: string): fc.Arbitrary<unknown> {
  if (schema.$ref) return fromSchema(ctx.resolve!(schema.$ref), ctx, name);
  const known = name !== undefined ? ctx.known?.[name] : undefined;
  const own = ownArbitrary(schema, ctx);
  return known ? fc.oneof({ arbitrary: known, weight: 4 }, { arbitrary: own, weight: 1 }) : own;
}

function ownArbitrary(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => fromSchema(s, ctx)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string": {
      if (schema.format === "uuid") return fc.uuid();
      if (schema.pattern) return PATTERN_EXAMPLES[schema.pattern] ?? fc.constant("x");
      const min = schema.minLength ?? 0;
      return fc.string({ minLength: min, maxLength: Math.max(min, Math.min(schema.maxLength ?? 20, 20)) });
    }
    case "integer":
      return fc.integer({ min: Math.max(schema.minimum ?? -1000, -1e6), max: Math.min(schema.maximum ?? 1000, 1e6) });
    case "number":
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(schema.items ? fromSchema(schema.items, ctx) : anyJson, { maxLength: 3 });
    case "object": {
      // A free-form object (`config`, `args`): sometimes nested around and far past the limit.
      if (!schema.properties) {
        return fc.oneof(
          { weight: 3, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }) },
          { weight: 1, arbitrary: fc.constantFrom(...DEPTHS).map((depth) => ({ v: new RawJson(nestedText(depth, "object")) })) },
        );
      }
      const required = new Set(schema.required ?? []);
      const entries = Object.entries(schema.properties);
      return fc.record(Object.fromEntries(entries.map(([k, s]) => [k, fromSchema(s, ctx, k)])), {
        requiredKeys: entries.map(([k]) => k).filter((k) => required.has(k)),
      });
    }
    default:
      return anyJson;
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations of a JSON body

export type Mutation =
  | { kind: "none" }
  | { kind: "drop"; at: number }
  | { kind: "extra"; key: string; value: unknown }
  | { kind: "retype"; at: number; depth: number; value: unknown }
  | { kind: "nasty"; at: number; value: unknown };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ kind: "drop" as const, at })) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("extra" as const),
      key: fc.oneof(fc.constantFrom("__proto__", "constructor", "extra"), fc.string({ maxLength: 10 })),
      value: anyJson,
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("retype" as const), at: fc.nat(), depth: fc.nat({ max: 2 }), value: wrongTyped }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("nasty" as const), at: fc.nat(), value: fc.oneof(nastyString, nastyNumber) }) },
);

/** Applies a mutation to a copy of `body` (fields chosen by index among those present). */
export function mutate(body: Record<string, unknown>, m: Mutation): Record<string, unknown> {
  const out = structuredClone(body);
  const keys = Object.keys(out);
  switch (m.kind) {
    case "none":
      return out;
    case "drop":
      if (keys.length) delete out[keys[m.at % keys.length]!];
      return out;
    case "extra":
      Object.defineProperty(out, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      return out;
    case "retype":
    case "nasty": {
      if (!keys.length) return { ...out, field: m.value };
      // Down into nested objects (a settings group's field), `depth` levels at most.
      let target: Record<string, unknown> = out;
      let key = keys[m.at % keys.length]!;
      for (let d = 0; m.kind === "retype" && d < m.depth; d++) {
        const inner = target[key];
        if (typeof inner !== "object" || inner === null || Array.isArray(inner) || Object.keys(inner).length === 0) break;
        target = inner as Record<string, unknown>;
        const innerKeys = Object.keys(target);
        key = innerKeys[(m.at + d) % innerKeys.length]!;
      }
      target[key] = m.value;
      return out;
    }
  }
}

export const utf8 = (text: string) => new TextEncoder().encode(text);

/** How the body goes on the wire: as JSON, or broken in its encoding or framing. */
export type Encoding =
  | "json"
  | "bom"
  | "truncated"
  | "trailing-garbage"
  | "duplicate-keys"
  | "invalid-utf8"
  | "utf16"
  | "not-an-object"
  | "empty"
  | "huge"
  | "deep-body";

export const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 12, arbitrary: fc.constant("json" as const) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Encoding>(
      "bom",
      "truncated",
      "trailing-garbage",
      "duplicate-keys",
      "invalid-utf8",
      "utf16",
      "not-an-object",
      "empty",
      "huge",
      "deep-body",
    ),
  },
);

export const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "application/problem+json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/json; charset=utf-16",
      "",
      "*/*",
    ),
  },
);

/** The body's bytes in this encoding. */
export function encode(body: unknown, how: Encoding): Uint8Array {
  const text = toJsonText(body);
  switch (how) {
    case "json":
      return utf8(text);
    case "bom":
      return utf8(`\ufeff${text}`);
    case "truncated":
      return utf8(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
    case "trailing-garbage":
      return utf8(`${text} }{`);
    case "duplicate-keys":
      return utf8(text.replace(/^\{/, '{"a":1,"a":2,'));
    case "invalid-utf8": {
      const bytes = utf8(text);
      const out = new Uint8Array(bytes.length + 3);
      out.set(bytes.subarray(0, 1));
      out.set([0xff, 0xfe, 0xc3], 1);
      out.set(bytes.subarray(1), 4);
      return out;
    }
    case "utf16": {
      const out = new Uint8Array(text.length * 2);
      for (let i = 0; i < text.length; i++) {
        out[2 * i] = text.charCodeAt(i) & 0xff;
        out[2 * i + 1] = text.charCodeAt(i) >> 8;
      }
      return out;
    }
    case "not-an-object":
      return utf8(`[${text}]`);
    case "empty":
      return new Uint8Array();
    case "huge":
      return utf8(text.replace(/^\{/, `{"padding":"${"p".repeat(1024 * 1024 + 10)}",`));
    case "deep-body":
      return utf8(text.replace(/^\{/, `{"deep":${nestedText(10_000)},`));
  }
}
