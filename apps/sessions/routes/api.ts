/**
 * The API's building blocks on hono-openapi. Every operation is a Hono route on the routes app:
 *
 *   routes.post("/templates/:template_id/capabilities",
 *     describe({ tag, summary, response, errors }),   // hono-openapi's describeRoute; body size limit
 *     params(TemplateParams), noQuery, json(CapabilityBody),
 *     async (c) => ... c.req.valid("param") ... c.req.valid("json") ...)
 *
 * Each input handler validates through @hono/standard-validator with the valibot schemas of
 * schemas.ts and describes itself in the OpenAPI document (openapi.ts), so the document lists
 * exactly what is served and validated. `mountApi` adds the 405 answers.
 *
 * Input rules, in order: the body size (413; `describe`), path parameters (a malformed UUID is 400
 * VALIDATION_ERROR), the query string (an unknown parameter is 400 INVALID_REQUEST; a bad or
 * repeated value 400 VALIDATION_ERROR), the body (not `application/json`, malformed JSON, nested
 * deeper than 64 levels or an unknown field: 400 INVALID_REQUEST; a missing or ill-typed field:
 * 400 VALIDATION_ERROR). A handler that refuses input throws an ApiError: the app's error handler
 * answers with the error envelope.
 */
import { sValidator } from "@hono/standard-validator";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Context, Env, Hono, MiddlewareHandler } from "hono";
import { describeRoute, type DescribeRouteOptions, resolver, validator } from "hono-openapi";
import * as v from "valibot";
import {
  ApiError,
  BodyLimitError,
  checkDeclaredLength,
  decodeStrict,
  invalidRequest,
  JsonDepthError,
  parseJsonBounded,
  readBoundedBytes,
  tooDeep,
  validationError,
} from "#lib/http";
import { ERROR_STATUS, type ErrorCode, SessionServiceError } from "../domain/errors.ts";
import { COMPONENTS, ErrorEnvelopeSchema, JSON_SCHEMA } from "./schemas.ts";

type ObjectSchema = v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>;
type AnySchema = v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>;

/** JSON bodies up to 1 MiB; the file upload endpoints take up to 8 MiB. */
const JSON_BODY_LIMIT = 1024 * 1024;
const TEXT_BODY_LIMIT = 8 * 1024 * 1024;
/** The largest body any operation takes. */
export const MAX_BODY_BYTES = Math.max(JSON_BODY_LIMIT, TEXT_BODY_LIMIT);

/** Options of hono-openapi's resolver for inputs: how the valibot schemas become JSON Schema. */
const INPUT_OPTIONS = { options: JSON_SCHEMA as Record<string, unknown> };
/** For records (responses): the named ones as references to `components.schemas`. */
const RECORD_OPTIONS = { options: { ...JSON_SCHEMA, definitions: COMPONENTS } as Record<string, unknown> };

const records = new WeakMap<AnySchema, ReturnType<typeof resolver>>();

/** hono-openapi's resolver for a record, converted once: with every named record to describe,
 * a conversion costs milliseconds, and the same records come up in many operations. */
function record(schema: AnySchema): ReturnType<typeof resolver> {
  let described = records.get(schema);
  if (!described) {
    const base = resolver(schema, RECORD_OPTIONS);
    let converted: ReturnType<typeof base.toOpenAPISchema> | undefined;
    // A copy each time: hono-openapi moves the definitions out of the result it is given.
    described = { ...base, toOpenAPISchema: () => (converted ??= base.toOpenAPISchema()).then((result) => structuredClone(result)) };
    records.set(schema, described);
  }
  return described;
}

// ---------------------------------------------------------------------------------------------
// The operation: its description, and the body size limit every operation applies first

export interface OperationDoc {
  tag: string;
  summary: string;
  description?: string;
  response: {
    status: 200 | 201 | 204;
    description: string;
    /** The record answered (a schema of schemas.ts, or `v.array` of one). */
    schema?: AnySchema;
    /** Default application/json. */
    contentType?: string;
  };
  /** What the operation itself can answer; the input errors of its shape are added (openapi.ts). */
  errors: ErrorCode[];
  /** A raw text body (the file uploads), up to TEXT_BODY_LIMIT; JSON bodies are `json(...)`. */
  textBody?: boolean;
}

export interface ErrorResponse<S = unknown> {
  description: string;
  "x-error-codes": ErrorCode[];
  content: { "application/json": { schema: S } };
}

/** The error responses for these codes (and INTERNAL), one per status, each answering the error
 * envelope (`schema`). */
export function errorResponses<S>(codes: readonly ErrorCode[], schema: S): Record<string, ErrorResponse<S>> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, "INTERNAL" as const])) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, ErrorResponse<S>> = {};
  for (const [status, list] of byStatus) {
    out[String(status)] = { description: `error.code: ${list.join(", ")}`, "x-error-codes": list, content: { "application/json": { schema } } };
  }
  return out;
}

/**
 * The operation's first handler: hono-openapi's `describeRoute` (tag, summary, success response,
 * error responses) that also limits the body size, before any input is looked at.
 */
export function describe(doc: OperationDoc): MiddlewareHandler {
  const { response } = doc;
  const success = {
    description: response.description,
    ...(response.schema && { content: { [response.contentType ?? "application/json"]: { schema: record(response.schema) } } }),
  };
  const spec: DescribeRouteOptions = {
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description && { description: doc.description }),
    ...(doc.textBody && { requestBody: { required: true, content: { "text/plain": { schema: { type: "string" } } } } }),
    responses: { [String(response.status)]: success, ...errorResponses(doc.errors, record(ErrorEnvelopeSchema)) },
  };
  // hono-openapi reads a route's description from the handler `describeRoute` returns (a symbol
  // property): the body limit carries the same.
  return Object.assign(limitBody(doc.textBody ? TEXT_BODY_LIMIT : JSON_BODY_LIMIT), describeRoute(spec));
}

/** lib/http's refusal in the API's words: 413 PAYLOAD_TOO_LARGE, and the connection is closed (the
 * client may still be sending the rest of the body); a body that breaks off is 400. */
export function bodyRefusal(err: BodyLimitError, limit: number): Error {
  if (err.code !== "BODY_TOO_LARGE") return invalidRequest(err.message);
  return new SessionServiceError("PAYLOAD_TOO_LARGE", `request body is larger than ${limit} bytes`, { limit_bytes: limit }, { Connection: "close" });
}

/**
 * The body size limit, as the other two products apply theirs (lib/http/body-limit.ts). A request
 * that declares its length is judged by the header alone, without touching the body stream, so the
 * body is later read in one piece (on Node, @hono/node-server reads it straight from the socket;
 * building a web stream costs more than the rest of a small request). A streamed body is read
 * here, counted in bytes and pieces, and handed on as the bytes read.
 */
function limitBody(limit: number): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    try {
      if (!checkDeclaredLength(c.req.raw, limit) && c.req.raw.body !== null) {
        // Never a SharedArrayBuffer's view: the bytes of one request.
        c.req.raw = new Request(c.req.raw, { body: (await readBoundedBytes(c.req.raw, limit)) as Uint8Array<ArrayBuffer> });
      }
    } catch (err) {
      throw err instanceof BodyLimitError ? bodyRefusal(err, limit) : err;
    }
    return next();
  };
}

// ---------------------------------------------------------------------------------------------
// Inputs

/** Standard Schema issues as `{path, message}` pairs, the shape `details.issues` carries. */
function issueList(issues: readonly StandardSchemaV1.Issue[]): { path: string; message: string }[] {
  return issues.map((issue) => ({
    path: (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join("."),
    message: issue.message,
  }));
}

type HookResult = { success: true } | { success: false; error: readonly StandardSchemaV1.Issue[]; data: unknown };

/** Path parameters: the first one that fails is 400 VALIDATION_ERROR (with the value sent). */
export function params<S extends ObjectSchema>(schema: S) {
  return validator(
    "param",
    schema,
    (result: HookResult) => {
      if (result.success) return;
      const [first] = issueList(result.error);
      throw validationError(`${first!.path}: ${first!.message}`, { issues: [first], value: (result.data as Record<string, string>)[first!.path] });
    },
    INPUT_OPTIONS,
  );
}

/** The query string's names one by one, as the URL has them: unknown or repeated ones are refused. */
function checkQueryNames(c: Context, known: readonly string[]): void {
  const url = c.req.url;
  const q = url.indexOf("?");
  const seen = new Set<string>();
  for (const name of q < 0 ? [] : new URLSearchParams(url.slice(q + 1)).keys()) {
    if (!known.includes(name)) {
      throw invalidRequest(`unknown query parameter: ${name}${known.length ? ` (known: ${known.join(", ")})` : ""}`, { parameter: name });
    }
    if (seen.has(name)) throw validationError(`${name}: given more than once`, { issues: [{ path: name, message: "given more than once" }] });
    seen.add(name);
  }
}

/** The query string: its names checked first, then its values against the schema. */
export function query<S extends ObjectSchema>(schema: S) {
  const known = Object.keys(schema.entries);
  return validator(
    "query",
    schema,
    (result: HookResult, c: Context) => {
      checkQueryNames(c, known);
      if (result.success) return;
      const issues = issueList(result.error);
      throw validationError(issues.map((i) => `${i.path}: ${i.message}`).join("; "), { issues });
    },
    INPUT_OPTIONS,
  );
}

/** For operations without query parameters: any is 400 INVALID_REQUEST. */
export const noQuery: MiddlewareHandler = async (c, next) => {
  checkQueryNames(c, []);
  await next();
};

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
/** The media types Hono's validator reads as JSON (a subset of JSON_TYPE). */
const HONO_JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Reads the body as text and refuses, before the validator parses it, what is not a JSON text
 * within the nesting limit. An empty body is still checked as JSON (it is malformed); a non-empty
 * one must say it is JSON.
 */
async function readJsonText(c: Context): Promise<void> {
  const type = c.req.header("content-type") ?? "";
  const text = await c.req.text();
  if (!JSON_TYPE.test(type)) {
    if (text.trim() !== "") throw invalidRequest("request bodies are JSON: send Content-Type: application/json");
    throw invalidRequest("request body must be a JSON object");
  }
  try {
    parseJsonBounded(text);
  } catch (err) {
    if (err instanceof JsonDepthError) throw tooDeep(err.maxDepth);
    throw invalidRequest(text.trim() === "" ? "request body is empty; expected JSON" : "request body is not valid JSON");
  }
  if (!HONO_JSON_TYPE.test(type.split(";")[0]!.trim())) {
    // A JSON media type Hono would not read (`application/a+b+json`): it reads the text read above.
    const headers = new Headers(c.req.raw.headers);
    headers.set("content-type", "application/json");
    c.req.raw = new Request(c.req.url, { method: c.req.method, headers, signal: c.req.raw.signal });
  }
}

/** The strict JSON rules of lib/http/json-body.ts as a Standard Schema: a refusal is one issue
 * carrying its ApiError (INVALID_REQUEST or VALIDATION_ERROR with `details.issues`). */
function strictJson<S extends ObjectSchema>(schema: S): StandardSchemaV1<v.InferInput<S>, v.InferOutput<S>> {
  return {
    "~standard": {
      version: 1,
      vendor: "valibot",
      validate: (value) => {
        try {
          return { value: decodeStrict(schema, value) };
        } catch (err) {
          if (err instanceof ApiError) return { issues: [{ message: err.message, refusal: err } as StandardSchemaV1.Issue] };
          throw err;
        }
      },
    },
  };
}

const refuseBody = (result: HookResult) => {
  if (!result.success) throw (result.error[0] as { refusal?: ApiError } | undefined)?.refusal ?? validationError(result.error.map((i) => i.message).join("; "));
};

/** A JSON object body: read and checked for JSON, then validated (strictly) against the schema. */
export function json<S extends ObjectSchema>(schema: S): MiddlewareHandler<Env, string, { in: { json: v.InferInput<S> }; out: { json: v.InferOutput<S> } }> {
  const check = sValidator("json", strictJson(schema), refuseBody);
  const middleware: MiddlewareHandler = async (c, next) => {
    await readJsonText(c);
    return check(c, next);
  };
  // Described as hono-openapi's own `validator("json", schema)` is (the request body's schema).
  return Object.assign(middleware, validator("json", schema, undefined, INPUT_OPTIONS));
}

// ---------------------------------------------------------------------------------------------
// 405

/** Every method a 405 is answered for (TRACE too: a known path never answers 404 to a method). */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"];

/**
 * Mounts the operations of `routes` on `api`. A known path with a method it does not serve is 405
 * with `Allow`; those answers for fixed paths are mounted first, so `GET /executions/repl` is a
 * 405 rather than a lookup of the execution "repl".
 */
export function mountApi(api: Hono, routes: Hono): void {
  const allowed = new Map<string, string[]>();
  for (const { method, path } of routes.routes) {
    const methods = allowed.get(path) ?? [];
    if (!methods.includes(method)) allowed.set(path, [...methods, method]);
  }
  const refuseOthers = (path: string) => {
    const methods = allowed.get(path)!;
    const others = METHODS.filter((m) => !methods.includes(m) && !(m === "HEAD" && methods.includes("GET")));
    const allow = methods.join(", ");
    api.on(others, path, (c) => {
      throw new SessionServiceError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on this path; use ${allow}`, undefined, { Allow: allow });
    });
  };
  const fixed = [...allowed.keys()].filter((path) => !path.includes(":"));
  for (const path of fixed) refuseOthers(path);
  api.route("/", routes);
  for (const path of allowed.keys()) if (!fixed.includes(path)) refuseOthers(path);
}
