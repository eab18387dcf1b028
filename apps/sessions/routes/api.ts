/**
 * The API's router: each operation is declared once (method, path, path parameters, query and
 * body schemas, success response, error codes) and registered on Hono from that declaration, so
 * the OpenAPI document (openapi.ts) lists exactly what is served and validated.
 *
 * Input rules, in order: path parameters (a malformed UUID is 400 VALIDATION_ERROR), the query
 * string (an unknown parameter is 400 INVALID_REQUEST; a bad or repeated value 400
 * VALIDATION_ERROR), the body (not `application/json`, malformed JSON or an unknown field: 400
 * INVALID_REQUEST; a missing or ill-typed field: 400 VALIDATION_ERROR; too large: 413).
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as v from "valibot";
import { errorEnvelope } from "../../../lib/http/errors.ts";
import { decodeStrict, describeIssues, invalidRequest, readJsonBody, validationError } from "../../../lib/http/json-body.ts";
import type { ErrorCode } from "../domain/errors.ts";
import { uuid } from "./schemas.ts";

type ObjectSchema = v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>;
export type Method = "get" | "post" | "put" | "patch" | "delete";

/** JSON bodies up to 1 MiB; the file upload endpoints take up to 8 MiB. */
export const JSON_BODY_LIMIT = 1024 * 1024;
export const TEXT_BODY_LIMIT = 8 * 1024 * 1024;

export interface Operation<P extends string = string, Q extends ObjectSchema | undefined = ObjectSchema | undefined, B extends ObjectSchema | "text" | undefined = ObjectSchema | "text" | undefined> {
  method: Method;
  /** OpenAPI form, relative to /api/v1: `/templates/{template_id}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Path parameters: a UUID (checked, read lower-case) or a free name. */
  params?: Record<P, "uuid" | "name">;
  query?: Q;
  /** A JSON object schema, or "text" for a raw text body. */
  body?: B;
  response: {
    status: 200 | 201 | 204;
    description: string;
    /** Key of COMPONENTS, or `[Key]` for a bare array of them. */
    schema?: string | [string];
    /** Default application/json. */
    contentType?: string;
  };
  /** What the operation itself can answer; the input errors of its shape are added. */
  errors: ErrorCode[];
}

export interface OperationInput<P extends string, Q, B> {
  params: Record<P, string>;
  query: Q extends ObjectSchema ? v.InferOutput<Q> : undefined;
  body: B extends ObjectSchema ? v.InferOutput<B> : B extends "text" ? string : undefined;
}

export type Handler<P extends string, Q, B> = (c: Context, input: OperationInput<P, Q, B>) => Response | Promise<Response>;

const honoPath = (path: string) => path.replace(/\{([a-z_]+)\}/g, ":$1");

function decodeParams(c: Context, params: Record<string, "uuid" | "name"> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, kind] of Object.entries(params ?? {})) {
    const raw = c.req.param(name) ?? "";
    if (kind === "name") {
      if (raw === "") throw validationError(`${name} must not be empty`, { issues: [{ path: name, message: "must not be empty" }] });
      out[name] = raw;
      continue;
    }
    const parsed = v.safeParse(uuid, raw);
    if (!parsed.success) {
      throw validationError(`${name}: must be a UUID`, { issues: [{ path: name, message: "must be a UUID" }], value: raw });
    }
    out[name] = parsed.output;
  }
  return out;
}

function decodeQuery<Q extends ObjectSchema>(c: Context, schema: Q | undefined): v.InferOutput<Q> | undefined {
  const values: Record<string, string> = {};
  const url = c.req.url;
  const q = url.indexOf("?");
  for (const [name, value] of q < 0 ? [] : new URLSearchParams(url.slice(q + 1))) {
    if (!schema || !Object.hasOwn(schema.entries, name)) {
      const known = schema ? Object.keys(schema.entries) : [];
      throw invalidRequest(`unknown query parameter: ${name}${known.length ? ` (known: ${known.join(", ")})` : ""}`, { parameter: name });
    }
    if (Object.hasOwn(values, name)) {
      throw validationError(`${name}: given more than once`, { issues: [{ path: name, message: "given more than once" }] });
    }
    values[name] = value;
  }
  if (!schema) return undefined;
  const result = v.safeParse(schema, values);
  if (!result.success) {
    const issues = describeIssues(result.issues);
    throw validationError(issues.map((i) => `${i.path}: ${i.message}`).join("; "), { issues });
  }
  return result.output;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

async function decodeBody(c: Context, body: ObjectSchema | "text" | undefined): Promise<unknown> {
  if (body === undefined) return undefined;
  if (body === "text") return c.req.text();
  if (!JSON_TYPE.test(c.req.header("content-type") ?? "")) {
    // An empty body is still checked as JSON (it is malformed); anything else must say it is JSON.
    const text = await c.req.text();
    if (text.trim() !== "") throw invalidRequest("request bodies are JSON: send Content-Type: application/json");
    return decodeStrict(body, undefined);
  }
  return readJsonBody(c, body);
}

/** 413, and the connection is closed: the client may still be sending the rest of the body. */
const tooLarge = (limit: number) => (c: Context) =>
  c.json(errorEnvelope("PAYLOAD_TOO_LARGE", `request body is larger than ${limit} bytes`, { limit_bytes: limit }), 413, { Connection: "close" });

/**
 * The body size limit. A request that declares its length is judged by the header alone, without
 * touching the body stream, so the body is later read in one piece (on Node, @hono/node-server
 * reads it straight from the socket; building the web stream Hono's `bodyLimit` reads costs more
 * than the rest of a small request). Anything else goes through `bodyLimit`, which counts bytes.
 */
function limitBody(limit: number): MiddlewareHandler {
  const counted = bodyLimit({ maxSize: limit, onError: tooLarge(limit) });
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      if (Number.parseInt(length, 10) > limit) return tooLarge(limit)(c);
      return next();
    }
    return counted(c, next);
  };
}

/** The input errors every operation of its shape can give (see the module comment). */
function impliedErrors(operation: Operation<string, ObjectSchema | undefined, ObjectSchema | "text" | undefined>): ErrorCode[] {
  const codes: ErrorCode[] = ["INVALID_REQUEST"];
  const uuidParams = Object.values(operation.params ?? {}).includes("uuid");
  if (uuidParams || operation.query || operation.body) codes.push("VALIDATION_ERROR");
  if (operation.body) codes.push("PAYLOAD_TOO_LARGE");
  return codes;
}

/** Every method a 405 is answered for (TRACE too: a known path never answers 404 to a method). */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"];

/**
 * Collects operations, then mounts them on a Hono app (`mount`), keeping their declarations for
 * the OpenAPI document. A known path with a method it does not serve is 405 with `Allow`; those
 * answers for fixed paths are mounted first, so `GET /executions/repl` is a 405 rather than a
 * lookup of the execution "repl".
 */
export class ApiRouter {
  readonly operations: Operation[] = [];
  private readonly routes: { operation: Operation; run: (c: Context) => Promise<Response> }[] = [];

  add<P extends string, Q extends ObjectSchema | undefined, B extends ObjectSchema | "text" | undefined>(
    operation: Operation<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): void {
    const declared = { ...(operation as unknown as Operation), errors: [...impliedErrors(operation), ...operation.errors] };
    this.operations.push(declared);
    this.routes.push({
      operation: declared,
      run: async (c) => {
        const params = decodeParams(c, operation.params);
        const query = decodeQuery(c, operation.query);
        const body = await decodeBody(c, operation.body);
        return handler(c, { params, query, body } as OperationInput<P, Q, B>);
      },
    });
  }

  mount(app: Hono): void {
    const allowed = new Map<string, string[]>();
    for (const op of this.operations) allowed.set(op.path, [...(allowed.get(op.path) ?? []), op.method.toUpperCase()]);
    const refuse = (path: string) => {
      const methods = allowed.get(path)!;
      const others = METHODS.filter((m) => !methods.includes(m) && !(m === "HEAD" && methods.includes("GET")));
      const allow = methods.join(", ");
      app.on(others, honoPath(path), (c) =>
        c.json(errorEnvelope("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on this path; use ${allow}`), 405, { Allow: allow }),
      );
    };
    const fixed = [...allowed.keys()].filter((path) => !path.includes("{"));
    for (const path of fixed) refuse(path);
    for (const { operation, run } of this.routes) {
      const limit = operation.body === "text" ? TEXT_BODY_LIMIT : JSON_BODY_LIMIT;
      app.on(operation.method.toUpperCase(), honoPath(operation.path), limitBody(limit), run);
    }
    for (const path of allowed.keys()) if (!fixed.includes(path)) refuse(path);
  }
}
