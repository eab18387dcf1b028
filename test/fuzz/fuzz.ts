/**
 * The fuzz suites' shared parts (issue #20): the seed and case counts, requests sent as raw bytes
 * (any method, any path, any body), values generated from a JSON Schema, and the mutations that
 * turn a valid request into a hostile one: missing and extra fields, wrong types, huge and deeply
 * nested values, control characters, broken encodings. Not a test file.
 *
 * Replay: every suite prints its seed (each test file draws its own unless FUZZ_SEED is set); a
 * failure names the seed, fast-check's `path` and the file:
 * `FUZZ_SEED=<n> FUZZ_PATH=<path> npx vitest run --project fuzz test/fuzz/<suite>.fuzz.test.ts`
 * starts at the failing case (FUZZ_PATH needs the same seed; without it the whole run is
 * replayed, for a failure that depends on what earlier cases stored). `FUZZ_RUNS=<factor>` multiplies every suite's case count (`FUZZ_RUNS=10` for a
 * long local run).
 */
import { request } from "node:http";
import fc from "fast-check";
import { MAX_JSON_DEPTH } from "../../lib/http/json-limits.ts";

// ---------------------------------------------------------------------------------------------
// Seed, case counts, running a property

/** The seed of this run: FUZZ_SEED, or a fresh one (printed, so any run can be replayed). */
export const SEED = process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== "" ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, not ${process.env.FUZZ_SEED}`);
const FACTOR = Number(process.env.FUZZ_RUNS ?? 1) || 1;

/** A suite's case count, times FUZZ_RUNS. */
/** How long a suite's server may take to answer its first health check: the fuzz project starts
 * while every other project starts its servers too, and a first start builds its bundle. */
export const START_MS = 90_000;

export const runs = (n: number) => Math.max(1, Math.round(n * FACTOR));

/**
 * Runs an async property with this run's seed. No shrinking (`endOnFailure`): the cases run
 * against a live server, whose state a failure may have changed; the seed and path replay the
 * case as it was. The failure message says how.
 */
export async function check<T>(name: string, arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>): Promise<void> {
  const path = process.env.FUZZ_PATH || undefined;
  const file = `test/fuzz/${name}.fuzz.test.ts`;
  console.log(`fuzz ${name}: seed ${SEED}, ${numRuns} cases${path ? `, path ${path}` : ""} (replay: FUZZ_SEED=${SEED} npx vitest run --project fuzz ${file})`);
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns, path, endOnFailure: true });
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `fuzz ${name} failed after ${details.numRuns} cases\n` +
        `${error}\n` +
        `replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} npx vitest run --project fuzz ${file}\n` +
        `case: ${describeCase(details.counterexample?.[0])}`,
    );
  }
}

function describeCase(value: unknown): string {
  // Bodies as text (cut), and without the operation's whole OpenAPI entry.
  const cut = (t: string) => (t.length > 300 ? `${t.slice(0, 200)}...(${t.length} characters)` : t);
  const text = JSON.stringify(value, (k, v: unknown) =>
    k === "spec" ? undefined : v instanceof Uint8Array ? `<${v.byteLength} bytes: ${cut(new TextDecoder().decode(v))}>` : typeof v === "string" ? cut(v) : v,
  );
  return text === undefined ? String(value) : text.length > 2000 ? `${text.slice(0, 2000)}... (${text.length} characters)` : text;
}


// ---------------------------------------------------------------------------------------------
// Requests as bytes

export interface FuzzRequest {
  method: string;
  /** Sent exactly as written (no normalization of `..` or percent-escapes). */
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** What this case is, for the failure report. */
  label: string;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body when it is JSON. */
  json?: unknown;
}

/** Sends a request over a fresh connection (node:http takes any method and path; fetch does not). */
export function send(origin: string, req: Pick<FuzzRequest, "method" | "path" | "headers" | "body">, timeoutMs = 15_000): Promise<FuzzResponse> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers["content-length"] = req.body.byteLength;
    const r = request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        if (/json/.test(String(res.headers["content-type"] ?? ""))) {
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on("error", (err: NodeJS.ErrnoException) => {
      // A server that refuses an oversized request (431, 413) may close the connection while the
      // client still writes: reported as status 0, which only an oversized request may get.
      if (err.code === "ECONNRESET" || err.code === "EPIPE") resolve({ status: 0, headers: {}, text: `connection closed: ${err.code}` });
      else reject(err);
    });
    if (req.body !== undefined) r.end(Buffer.from(req.body));
    else r.end();
  });
}

export const utf8 = (text: string) => new TextEncoder().encode(text);

/** Refused by the HTTP server before the app saw it (Node's 16 KiB header limit: 431 with no
 * body; an overlong URI: 414). Documented by the runtime, not the product; nothing is stored. */
export const refusedByServer = (res: FuzzResponse) => res.status === 431 || res.status === 414;

/** Larger than any limit of the three services: the server may close the connection on it. */
export const OVERSIZED_BYTES = 16 * 1024;

/** A connection closed without an answer is acceptable only for an oversized request (and the
 * health check that follows every case tells a refusal from a crash). */
export function expectAnswered(req: Pick<FuzzRequest, "path" | "body" | "label">, res: FuzzResponse): void {
  if (res.status !== 0) return;
  const size = req.path.length + (req.body?.byteLength ?? 0);
  if (size <= OVERSIZED_BYTES) throw new Error(`${req.label}: the connection was closed without an answer (${res.text}); the request was ${size} bytes`);
}

/** encodeURIComponent, except that a lone surrogate becomes the bytes of its (invalid) UTF-8
 * encoding instead of a URIError: a path segment that does not decode is a case worth sending. */
export function encodePathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value.replace(/[\ud800-\udfff]|[^\ud800-\udfff]+/g, (part) => {
      const code = part.charCodeAt(0);
      if (part.length === 1 && code >= 0xd800 && code <= 0xdfff) {
        return `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
      }
      return encodeURIComponent(part);
    });
  }
}

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

export const deepValue = fc.record({ depth: fc.constantFrom(...DEPTHS), kind: fc.constantFrom("array" as const, "object" as const) }).map(({ depth, kind }) => new RawJson(nestedText(depth, kind)));

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
  fc.constantFrom(0, -0, -1, 1, 0.5, -1.5, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53 + 2, -(2 ** 53), 1e21, 1e308, -1e308, 5e-324, 86_400_000, 86_400_001),
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
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("extra" as const), key: fc.oneof(fc.constantFrom("__proto__", "constructor", "extra"), fc.string({ maxLength: 10 })), value: anyJson }) },
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
  { weight: 1, arbitrary: fc.constantFrom<Encoding>("bom", "truncated", "trailing-garbage", "duplicate-keys", "invalid-utf8", "utf16", "not-an-object", "empty", "huge", "deep-body") },
);

export const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  { weight: 1, arbitrary: fc.constantFrom("application/json; charset=utf-8", "application/problem+json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16", "", "*/*") },
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

// ---------------------------------------------------------------------------------------------
// What a strict server must answer for a JSON body: the schema as an oracle

export interface Verdict {
  /** Nested deeper than MAX_JSON_DEPTH (64): refused before anything else. */
  tooDeep: boolean;
  /** A field the schema does not name, at any depth of a declared object. */
  unknown: string[];
  /** A missing, ill-typed or out-of-range field (arrays where objects are expected included). */
  invalid: string[];
}

const UUID = /^[\da-f]{8}(?:-[\da-f]{4}){3}-[\da-f]{12}$/iu;
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Judges the JSON text of a body against the object schema of its operation. */
export function judge(schema: JsonSchema, text: string, resolve?: (ref: string) => JsonSchema): Verdict {
  const verdict: Verdict = { tooDeep: false, unknown: [], invalid: [] };
  if (jsonDepth(text) > MAX_JSON_DEPTH) return { ...verdict, tooDeep: true };
  walk(schema, JSON.parse(text) as unknown, "", verdict, resolve);
  return verdict;
}

/** Bracket depth of JSON text outside strings. */
function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") deepest = Math.max(deepest, ++depth);
    else if (c === "]" || c === "}") depth--;
  }
  return deepest;
}

function walk(schema: JsonSchema, value: unknown, path: string, v: Verdict, resolve?: (ref: string) => JsonSchema): void {
  if (schema.$ref) return walk(resolve!(schema.$ref), value, path, v, resolve);
  const bad = () => void v.invalid.push(path);
  if (schema.enum) return void (schema.enum.includes(value) || bad());
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      if (!isPlainObject(value)) return bad();
      if (!schema.properties) return;
      for (const key of Object.keys(value)) if (!Object.hasOwn(schema.properties, key)) v.unknown.push(path ? `${path}.${key}` : key);
      for (const key of schema.required ?? []) if (!Object.hasOwn(value, key)) v.invalid.push(path ? `${path}.${key}` : key);
      for (const [key, sub] of Object.entries(schema.properties)) {
        if (Object.hasOwn(value, key)) walk(sub, value[key], path ? `${path}.${key}` : key, v, resolve);
      }
      return;
    }
    case "array":
      if (!Array.isArray(value)) return bad();
      value.forEach((item, i) => schema.items && walk(schema.items, item, `${path}.${i}`, v, resolve));
      return;
    case "string":
      if (typeof value !== "string") return bad();
      if (schema.minLength !== undefined && value.length < schema.minLength) return bad();
      if (schema.maxLength !== undefined && value.length > schema.maxLength) return bad();
      if (schema.format === "uuid" && !UUID.test(value)) return bad();
      if (schema.pattern && !new RegExp(schema.pattern, "u").test(value)) return bad();
      return;
    case "integer":
    case "number":
      if (typeof value !== "number" || (type === "integer" && !Number.isInteger(value))) return bad();
      if (schema.minimum !== undefined && value < schema.minimum) return bad();
      if (schema.maximum !== undefined && value > schema.maximum) return bad();
      return;
    case "boolean":
      if (typeof value !== "boolean") bad();
      return;
  }
}
