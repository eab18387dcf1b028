/**
 * GET /openapi.json (beyond the spec): an OpenAPI 3.1 document built from the router's operation
 * declarations and the valibot schemas (via @valibot/to-json-schema), so it lists exactly the
 * routes this app serves, with the inputs it validates and the errors each can answer.
 */
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { ERROR_STATUS, type ErrorCode } from "../domain/errors.ts";
import type { ApiRouter, Operation } from "./api.ts";
import { COMPONENTS, jsonObject } from "./schemas.ts";

type AnySchema = v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>;

const CONFIG: ConversionConfig = {
  target: "draft-2020-12",
  // Query values are strings on the wire: describe what is sent, before any transformation.
  typeMode: "input",
  errorMode: "ignore",
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  overrideSchema: ({ valibotSchema }) => (valibotSchema === jsonObject ? { type: "object" } : undefined),
};

function inline(schema: AnySchema): JsonSchema {
  const { $schema: _schema, $defs: _defs, ...rest } = toJsonSchema(schema, { ...CONFIG, definitions: COMPONENTS });
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function responseSchema(schema: string | [string]) {
  return Array.isArray(schema) ? { type: "array", items: ref(schema[0]) } : ref(schema);
}

function parameters(op: Operation) {
  const out: Record<string, unknown>[] = [];
  for (const [name, kind] of Object.entries(op.params ?? {})) {
    out.push({ name, in: "path", required: true, schema: kind === "uuid" ? { type: "string", format: "uuid" } : { type: "string" } });
  }
  for (const [name, entry] of Object.entries(op.query?.entries ?? {})) {
    const optional = (entry as { type: string }).type === "optional";
    const schema = inline(entry as AnySchema);
    out.push({ name, in: "query", required: !optional, schema, ...(typeof schema.description === "string" && { description: schema.description }) });
  }
  return out;
}

function responses(op: Operation) {
  const success: Record<string, unknown> = { description: op.response.description };
  if (op.response.schema) success.content = { [op.response.contentType ?? "application/json"]: { schema: responseSchema(op.response.schema) } };
  const out: Record<string, unknown> = { [String(op.response.status)]: success };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...new Set([...op.errors, "INTERNAL" as const])]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `error.code: ${codes.join(", ")}`,
      "x-error-codes": codes,
      content: { "application/json": { schema: ref("ErrorEnvelope") } },
    };
  }
  return out;
}

export function openApiDocument(operations: readonly Operation[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const item: Record<string, unknown> = {
      operationId: `${op.method}${op.path.replace(/\{([a-z_]+)\}/g, "by_$1").replace(/[^A-Za-z0-9]+(.)?/g, (_, ch: string | undefined) => (ch ?? "").toUpperCase())}`,
      tags: [op.tag],
      summary: op.summary,
      ...(op.description && { description: op.description }),
      parameters: parameters(op),
      responses: responses(op),
    };
    if (op.body === "text") item.requestBody = { required: true, content: { "text/plain": { schema: { type: "string" } } } };
    else if (op.body) item.requestBody = { required: true, content: { "application/json": { schema: inline(op.body as AnySchema) } } };
    (paths[op.path] ??= {})[op.method] = item;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Session service",
      version,
      description: "Runtime templates, live QuickJS script sessions and executions with typed events. See docs/sessions.md.",
    },
    servers: [{ url: "/api/v1" }],
    paths,
    components: { schemas: toJsonSchemaDefs(COMPONENTS, CONFIG) },
  };
}

/** Registers GET /openapi.json; the document is built once, on first request. */
export function registerOpenApi(router: ApiRouter, version: string): void {
  let document: Record<string, unknown> | undefined;
  router.add(
    {
      method: "get",
      path: "/openapi.json",
      tag: "operations",
      summary: "This document (beyond the spec)",
      response: { status: 200, description: "OpenAPI 3.1" },
      errors: [],
    },
    (c) => c.json((document ??= openApiDocument(router.operations, version))),
  );
}
