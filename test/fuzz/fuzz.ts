/**
 * The fuzz suites' shared parts (issue #20): the seed and case counts, requests sent as raw bytes
 * (any method, any path, any body), and the schema as the oracle of what a strict server must
 * answer. The values the suites send (hostile values, values from a JSON Schema, mutations, broken
 * encodings) are in values.ts, re-exported here. Not a test file.
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
import { MAX_JSON_DEPTH } from "#lib/http";
import type { JsonSchema } from "./values.ts";

// The suites import everything from here; the values live in their own module.
export * from "./values.ts";

// ---------------------------------------------------------------------------------------------
// Seed, case counts, running a property

/** The seed of this run: FUZZ_SEED, or a fresh one (printed, so any run can be replayed). */
export const SEED = process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== "" ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, not ${process.env.FUZZ_SEED}`);
const FACTOR = Number(process.env.FUZZ_RUNS ?? 1) || 1;

/** A suite's case count, times FUZZ_RUNS. */
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
  const text = JSON.stringify(
    value,
    (k, v: unknown) =>
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
