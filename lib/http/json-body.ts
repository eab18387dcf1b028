/**
 * Strict JSON request bodies: malformed JSON, JSON nested deeper than `MAX_JSON_DEPTH` (64, see
 * ./json-limits.ts; `details.max_depth`), a non-object body or a field the schema does not name
 * (at the top level, or inside a nested `v.strictObject`) is 400 `INVALID_REQUEST`; a missing or
 * ill-typed field is 400 `VALIDATION_ERROR` with the offending paths in `details.issues`. A field
 * whose schema is an object is ill-typed unless its value is a plain JSON object: valibot's
 * object schemas take an array as an object (`{"limits": []}` would read as `{}`), so arrays,
 * `null` and scalars there are refused here, each at its own path.
 */
import type { Context } from "hono";
import * as v from "valibot";
import { ApiError } from "./errors.ts";
import { JsonDepthError, MAX_JSON_DEPTH, parseJsonBounded, valueDepth } from "./json-limits.ts";

type ObjectSchema = v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>;

/** The codes of a refused JSON body. */
export type JsonBodyErrorCode = "INVALID_REQUEST" | "VALIDATION_ERROR";

export function invalidRequest(message: string, details?: Record<string, unknown>): ApiError<"INVALID_REQUEST"> {
  return new ApiError(400, "INVALID_REQUEST", message, details);
}

export function validationError(message: string, details?: Record<string, unknown>): ApiError<"VALIDATION_ERROR"> {
  return new ApiError(400, "VALIDATION_ERROR", message, details);
}

/** Issues as `{path, message}` pairs, the shape `details.issues` carries. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): { path: string; message: string }[] {
  return issues.map((issue) => ({
    path: issue.path?.map((p) => String(p.key)).join(".") ?? "",
    message: issue.message,
  }));
}

/** 400 INVALID_REQUEST for a value nested deeper than `maxDepth` (with `details.max_depth`). */
export function tooDeep(maxDepth = MAX_JSON_DEPTH): ApiError<"INVALID_REQUEST"> {
  return invalidRequest(`request body is nested deeper than ${maxDepth} levels`, { max_depth: maxDepth });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

type AnySchema = v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>;
const OBJECT_TYPES = new Set(["object", "strict_object", "loose_object", "object_with_rest"]);
const WRAPPERS = new Set(["optional", "exact_optional", "nullish", "nullable", "non_optional", "non_nullable", "non_nullish", "undefinedable"]);

/**
 * Paths where the schema wants an object and the value is present but is not a plain object
 * (an array, or a scalar or null where valibot would only say "Expected Object"). Walks the
 * schema and the value together (the value is already bounded in depth).
 */
function notObjects(schema: AnySchema, value: unknown, path: string[], out: string[]): void {
  let s = schema as AnySchema & { wrapped?: AnySchema; entries?: Record<string, AnySchema>; item?: AnySchema };
  while (WRAPPERS.has(s.type) && s.wrapped) {
    if (value === undefined || (value === null && (s.type === "nullable" || s.type === "nullish"))) return;
    s = s.wrapped as typeof s;
  }
  if (OBJECT_TYPES.has(s.type) && s.entries) {
    if (!isPlainObject(value)) {
      out.push(path.join("."));
      return;
    }
    for (const [key, entry] of Object.entries(s.entries)) {
      if (Object.hasOwn(value, key)) notObjects(entry, value[key], [...path, key], out);
    }
  } else if (s.type === "array" && s.item && Array.isArray(value)) {
    value.forEach((item, i) => notObjects(s.item!, item, [...path, String(i)], out));
  }
}

/** Validates an already-parsed value against an object schema with the strict rules above. */
export function decodeStrict<S extends ObjectSchema>(schema: S, value: unknown): v.InferOutput<S> {
  if (!isPlainObject(value)) {
    throw invalidRequest("request body must be a JSON object");
  }
  if (valueDepth(value) > MAX_JSON_DEPTH) throw tooDeep();
  const unknownFields = Object.keys(value).filter((key) => !Object.hasOwn(schema.entries, key));
  if (unknownFields.length > 0) {
    throw invalidRequest(`unknown field${unknownFields.length > 1 ? "s" : ""}: ${unknownFields.join(", ")}`, {
      fields: unknownFields,
    });
  }
  const wrong: string[] = [];
  for (const [key, entry] of Object.entries(schema.entries)) {
    if (Object.hasOwn(value, key)) notObjects(entry, value[key], [key], wrong);
  }
  if (wrong.length > 0) {
    const issues = wrong.map((path) => ({ path, message: "must be a JSON object" }));
    throw validationError(issues.map((i) => `${i.path}: ${i.message}`).join("; "), { issues });
  }
  // One issue per field: the first check of its pipe that fails (1e300 is not an integer; that it
  // is also above a maximum adds nothing).
  const result = v.safeParse(schema, value, { abortPipeEarly: true });
  if (!result.success) {
    // Nested objects declared with `v.strictObject` report their unknown keys as issues (expected
    // "never"): those are unknown fields too, not invalid values.
    const nestedUnknown = describeIssues(result.issues.filter((issue) => issue.type === "strict_object" && issue.expected === "never")).map((i) => i.path);
    if (nestedUnknown.length > 0) {
      throw invalidRequest(`unknown field${nestedUnknown.length > 1 ? "s" : ""}: ${nestedUnknown.join(", ")}`, { fields: nestedUnknown });
    }
    const issues = describeIssues(result.issues);
    throw validationError(issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "), { issues });
  }
  return result.output;
}

/** Reads the request body as JSON (refusing it, unparsed, when it nests too deep) and decodes it
 * with `decodeStrict`. */
export async function readJsonBody<S extends ObjectSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  const text = await c.req.text();
  let parsed: unknown;
  try {
    parsed = parseJsonBounded(text);
  } catch (err) {
    if (err instanceof JsonDepthError) throw tooDeep(err.maxDepth);
    throw invalidRequest(text.trim() === "" ? "request body is empty; expected JSON" : "request body is not valid JSON");
  }
  return decodeStrict(schema, parsed);
}
