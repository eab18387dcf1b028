/**
 * Strict JSON request bodies: malformed JSON, a non-object body or a field the schema does not
 * name (at the top level, or inside a nested `v.strictObject`) is 400 `INVALID_REQUEST`; a
 * missing or ill-typed field is 400 `VALIDATION_ERROR` with the offending paths in
 * `details.issues`.
 */
import type { Context } from "hono";
import * as v from "valibot";
import { ApiError } from "./errors.ts";

type ObjectSchema = v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>;

export function invalidRequest(message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(400, "INVALID_REQUEST", message, details);
}

export function validationError(message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(400, "VALIDATION_ERROR", message, details);
}

/** Issues as `{path, message}` pairs, the shape `details.issues` carries. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): { path: string; message: string }[] {
  return issues.map((issue) => ({
    path: issue.path?.map((p) => String(p.key)).join(".") ?? "",
    message: issue.message,
  }));
}

/** Validates an already-parsed value against an object schema with the strict rules above. */
export function decodeStrict<S extends ObjectSchema>(schema: S, value: unknown): v.InferOutput<S> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest("request body must be a JSON object");
  }
  const unknownFields = Object.keys(value).filter((key) => !Object.hasOwn(schema.entries, key));
  if (unknownFields.length > 0) {
    throw invalidRequest(`unknown field${unknownFields.length > 1 ? "s" : ""}: ${unknownFields.join(", ")}`, {
      fields: unknownFields,
    });
  }
  const result = v.safeParse(schema, value);
  if (!result.success) {
    // Nested objects declared with `v.strictObject` report their unknown keys as issues: those
    // are unknown fields too, not invalid values.
    const nestedUnknown = describeIssues(result.issues.filter((issue) => issue.type === "strict_object")).map((i) => i.path);
    if (nestedUnknown.length > 0) {
      throw invalidRequest(`unknown field${nestedUnknown.length > 1 ? "s" : ""}: ${nestedUnknown.join(", ")}`, { fields: nestedUnknown });
    }
    const issues = describeIssues(result.issues);
    throw validationError(issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "), { issues });
  }
  return result.output;
}

/** Reads the request body as JSON and decodes it with `decodeStrict`. */
export async function readJsonBody<S extends ObjectSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  const text = await c.req.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidRequest(text.trim() === "" ? "request body is empty; expected JSON" : "request body is not valid JSON");
  }
  return decodeStrict(schema, parsed);
}
