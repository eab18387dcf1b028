/**
 * GET /openapi.json (beyond the spec): the OpenAPI 3.1 document hono-openapi generates from the
 * routes app (each operation's `describe(...)` and input validators, the valibot schemas through
 * @valibot/to-json-schema), so it lists exactly the routes this app serves, with the inputs it
 * validates and the errors each can answer. One step is this service's own: the input errors an
 * operation's shape implies (api.ts) are added to the codes it declares.
 */
import type { Hono } from "hono";
import { generateSpecs } from "hono-openapi";
import type { ErrorCode } from "../domain/errors.ts";
import { describe, type ErrorResponse, errorResponses, noQuery } from "./api.ts";

type Document = Awaited<ReturnType<typeof generateSpecs>>;

interface Operation {
  parameters?: { in: string; required?: boolean; description?: string; schema?: { format?: string; description?: string } }[];
  requestBody?: unknown;
  responses: Record<string, Partial<ErrorResponse>>;
}

/**
 * Completes an operation as hono-openapi generated it. Parameters say whether they are required
 * and keep their description in their schema too (hono-openapi moves it to the parameter). The
 * input errors of the operation's shape are added: INVALID_REQUEST always (an unknown query
 * parameter); VALIDATION_ERROR with a UUID path parameter, a query or a body; PAYLOAD_TOO_LARGE
 * with a body. They come first, then the operation's own, then INTERNAL (see errorResponses).
 */
function complete(op: Operation): void {
  const parameters = (op.parameters ??= []);
  for (const p of parameters) {
    p.required ??= false;
    if (p.description !== undefined && p.schema) p.schema.description ??= p.description;
  }
  const implied: ErrorCode[] = ["INVALID_REQUEST"];
  if (op.requestBody || parameters.some((p) => p.in === "query" || p.schema?.format === "uuid")) implied.push("VALIDATION_ERROR");
  if (op.requestBody) implied.push("PAYLOAD_TOO_LARGE");
  const errors = Object.values(op.responses).filter((r) => r["x-error-codes"]);
  const declared = errors.flatMap((r) => r["x-error-codes"]!);
  const envelope = errors[0]!.content!["application/json"].schema;
  op.responses = {
    ...Object.fromEntries(Object.entries(op.responses).filter(([, r]) => !r["x-error-codes"])),
    ...errorResponses([...implied, ...declared], envelope),
  };
}

async function openApiDocument(routes: Hono, version: string): Promise<Document> {
  const document = await generateSpecs(routes, {
    documentation: {
      info: {
        title: "Session service",
        version,
        description: "Runtime templates, live QuickJS script sessions and executions with typed events. See docs/sessions.md.",
      },
      servers: [{ url: "/api/v1" }],
    },
    // /openapi.json is an operation, not a static file.
    excludeStaticFile: false,
    // Every operation lists its own 400 (the error envelope), added above.
    defaultValidationErrorResponse: false,
  });
  for (const item of Object.values(document.paths)) {
    for (const op of Object.values(item)) complete(op as Operation);
  }
  return document;
}

/** Registers GET /openapi.json; the document is built once, on first request. */
export function registerOpenApi(routes: Hono, version: string): void {
  let document: Promise<Document> | undefined;
  routes.get(
    "/openapi.json",
    describe({ tag: "operations", summary: "This document (beyond the spec)", response: { status: 200, description: "OpenAPI 3.1" }, errors: [] }),
    noQuery,
    async (c) => {
      document ??= openApiDocument(routes, version).catch((err: unknown) => {
        document = undefined; // not kept: the next request tries again
        throw err;
      });
      return c.json(await document);
    },
  );
}
