/**
 * The plan table as an OpenAPI 3.1 document (`routes openapi`, and `GET /_routes/openapi.json`
 * in dev mode): each route with its path parameters, its security requirements (bearer JWT,
 * DPoP, the signed-in session cookie; public routes `security: []`), the CSRF header where
 * `.csrf()` applies, and the answers the pipeline itself can give it (400, 401, 403, 404, 413,
 * 429, 500) with the error envelope. Mounts and static directories appear as path items of their
 * own (`x-routes-kind`). Made from `RouteHost.routes()` only, so it says what the host enforces,
 * never what a script claims.
 */
import { CSRF_HEADER } from "../auth/csrf.ts";
import { parsePattern } from "../core/plan.ts";
import { DEFAULT_SESSION_COOKIE } from "../core/session.ts";
import type { RouteInfo } from "../core/types.ts";

interface OpenApiOptions {
  /** `info.title`: what is described (the script's path). */
  title: string;
  /** `info.version` (default "0": a plan has no version of its own). */
  version?: string;
  /** The host session cookie's name (default routes_session). */
  cookieName?: string;
}

type Json = Record<string, unknown>;

/** The methods OpenAPI 3.1 has an operation for; `ALL` stands for each of them but TRACE. */
const OPERATIONS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const ALL = ["get", "put", "post", "delete", "options", "head", "patch"] as const;
const BODYLESS = new Set(["get", "head", "options", "trace"]);
/** The methods `.csrf()` checks (pipeline/state.ts UNSAFE). */
const SAFE = new Set(["get", "head", "options", "trace"]);

/** Parameter name for a trailing `*` (not captured by the host: documentation only). */
const REST = "rest";

const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", description: "Stable error code, e.g. UNAUTHENTICATED" },
        message: { type: "string" },
        details: { type: "object" },
      },
    },
  },
};

const errorResponse = (description: string, headers?: Json): Json => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema });

/** The answers of the pipeline, by name in `components.responses`. */
const RESPONSES = {
  BadRequest: errorResponse("The body does not parse (INVALID_JSON, JSON_TOO_DEEP, INVALID_FORM, BODY_UNREADABLE); before authentication"),
  Unauthenticated: errorResponse("No credentials, or invalid ones (UNAUTHENTICATED)", {
    "WWW-Authenticate": header("Bearer and DPoP challenges, with error and error_description for an invalid token"),
  }),
  Forbidden: errorResponse("The authorizer refused the action (FORBIDDEN), or the CSRF token is missing or wrong (CSRF_FAILED)"),
  NotFound: errorResponse("A resource declared with .mustExist() does not exist (NOT_FOUND)"),
  TooLarge: errorResponse("The body is larger than the host's limit (BODY_TOO_LARGE)"),
  TooManyRequests: errorResponse("Past a .rateLimit(...) (RATE_LIMITED)", {
    "Retry-After": header("Seconds until the window has room again", { type: "integer" }),
    RateLimit: header("The remaining quota and reset (IETF httpapi RateLimit header fields)"),
    "RateLimit-Policy": header("The limits that apply (IETF httpapi RateLimit header fields)"),
  }),
  Internal: errorResponse("The handler failed or ran past its limits (HANDLER_FAILED), or a service the route needs is missing (fails closed)"),
};

const ref = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` });

/** `/t/:tenant/x/*` as OpenAPI writes it: `/t/{tenant}/x/{rest}`, with its parameters. */
function openApiPath(pattern: string): { path: string; params: string[]; rest: boolean } {
  const parsed = parsePattern(pattern);
  const segments = parsed.path.split("/").slice(1);
  const rest = segments.at(-1) === "*";
  const params = [...parsed.params];
  const path = "/" + segments.map((s) => (s === "*" ? `{${REST}}` : s.startsWith(":") ? `{${s.slice(1)}}` : s)).join("/");
  return { path, params, rest };
}

function pathParameters(params: string[], rest: boolean): Json[] {
  const out: Json[] = params.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
    description: "One path segment, percent-decoded",
  }));
  if (rest) {
    out.push({
      name: REST,
      in: "path",
      required: true,
      schema: { type: "string" },
      description: "The rest of the path (any number of segments, possibly none); not captured",
    });
  }
  return out;
}

function securityOf(row: RouteInfo): Json[] {
  if (row.access === "public" || row.access === "raw") return [];
  const schemes = [{ bearerJwt: [] }, { dpop: [] }, { signInCookie: [] }];
  return row.access === "auth?" ? [...schemes, {}] : schemes;
}

function operationFor(row: RouteInfo, method: string, operationId: string, params: Json[]): Json {
  const authenticated = row.access === "auth" || row.access === "auth?";
  const csrf = row.csrf === true && !SAFE.has(method);
  const responses: Json = { default: { description: row.source === "host" ? "The host's answer" : "What the handler answers" } };
  if (!BODYLESS.has(method)) responses["400"] = ref("BadRequest");
  if (authenticated) responses["401"] = ref("Unauthenticated");
  if (authenticated || csrf) responses["403"] = ref("Forbidden");
  if (row.mustExist?.length) responses["404"] = ref("NotFound");
  if (!BODYLESS.has(method)) responses["413"] = ref("TooLarge");
  if (row.rateLimits?.length) responses["429"] = ref("TooManyRequests");
  responses["500"] = ref("Internal");
  const parameters = [...params];
  if (csrf) {
    parameters.push({
      name: CSRF_HEADER.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase()),
      in: "header",
      required: false,
      schema: { type: "string" },
      description: "The CSRF token (ctx.csrfToken of the signed-in session); or a _csrf field of a form or JSON body. Missing or wrong: 403 CSRF_FAILED",
    });
  }
  const op: Json = {
    operationId,
    summary: `${row.method} ${row.pattern}`,
    tags: [row.source],
    security: securityOf(row),
    responses,
    "x-routes-access": row.access,
  };
  if (parameters.length > 0) op.parameters = parameters;
  if (!BODYLESS.has(method)) {
    op.requestBody = {
      required: false,
      description: "JSON and forms are parsed (ctx.body); anything else is text",
      content: { "application/json": {}, "application/x-www-form-urlencoded": {}, "multipart/form-data": {}, "*/*": {} },
    };
  }
  if (row.action !== undefined) op["x-routes-action"] = row.action;
  if (row.resources?.length) op["x-routes-resources"] = row.resources;
  if (row.audit !== undefined) op["x-routes-audit"] = row.audit;
  if (row.rateLimits?.length) op["x-routes-rate-limits"] = row.rateLimits;
  if (row.at !== undefined) op["x-routes-at"] = row.at;
  return op;
}

/** A mount or static directory: a path item for its prefix and everything below it. */
function prefixItem(row: RouteInfo): { path: string; item: Json } {
  const base = row.pattern === "/" ? "" : row.pattern;
  const spa = row.spaIndex !== undefined;
  const item: Json = {
    summary: row.kind === "mount" ? `Mounted service at ${row.pattern}` : spa ? `Single-page app at ${row.pattern}` : `Static files at ${row.pattern}`,
    description: row.kind === "mount"
      ? "A host service mounted by the script: it routes everything below its prefix itself (its own description is its own)"
      : spa
      ? `Files as they are; every other GET and HEAD path answers the index (${row.spaIndex})`
      : "Files of a directory (a directory answers its index.html); GET and HEAD only",
    parameters: pathParameters([], true),
    "x-routes-kind": spa ? "spa" : row.kind,
  };
  if (row.excludePrefixes?.length) item["x-routes-exclude-prefixes"] = row.excludePrefixes;
  if (row.at !== undefined) item["x-routes-at"] = row.at;
  if (row.kind === "static") {
    for (const method of ["get", "head"]) {
      item[method] = {
        operationId: `${method}_${spa ? "spa" : "static"}${base.replace(/[^A-Za-z0-9]+/g, "_")}`,
        security: [],
        tags: [row.source],
        responses: {
          "200": { description: spa ? "The file, or the app's index" : "The file" },
          ...(spa ? {} : { "404": { description: "No such file (also any path that tries to leave the directory)" } }),
        },
      };
    }
  }
  return { path: `${base}/{${REST}}`, item };
}

/** The OpenAPI 3.1 document of a host's plan table. */
export function planOpenApi(rows: RouteInfo[], options: OpenApiOptions): Json {
  const paths: Record<string, Json> = {};
  const ids = new Set<string>();
  const unlisted: string[] = [];
  const uniqueId = (wanted: string) => {
    let id = wanted;
    for (let n = 2; ids.has(id); n++) id = `${wanted}_${n}`;
    ids.add(id);
    return id;
  };
  for (const row of rows) {
    if (row.kind !== "route") {
      const { path, item } = prefixItem(row);
      if (!paths[path]) {
        for (const m of OPERATIONS) if (item[m]) (item[m] as Json).operationId = uniqueId(String((item[m] as Json).operationId));
        paths[path] = item;
      }
      continue;
    }
    const method = row.method!.toLowerCase();
    const methods = method === "all" ? ALL : (OPERATIONS as readonly string[]).includes(method) ? [method] : [];
    if (methods.length === 0) {
      unlisted.push(`${row.method} ${row.pattern}`); // OpenAPI 3.1 has no operation for other methods
      continue;
    }
    const { path, params, rest } = openApiPath(row.pattern);
    const item = (paths[path] ??= {});
    const parameters = pathParameters(params, rest);
    for (const m of methods) {
      if (item[m]) continue; // the first registered route answers: a later one is unreachable
      item[m] = operationFor(row, m, uniqueId(`${m}${path.replace(/[^A-Za-z0-9]+/g, "_").replace(/_$/, "")}`), parameters);
    }
  }
  const doc: Json = {
    openapi: "3.1.0",
    info: {
      title: options.title,
      version: options.version ?? "0",
      description:
        "Made by the route host from the script's plan table: what each route requires is what the host enforces before the handler runs. Public routes have `security: []`.",
    },
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
      responses: RESPONSES,
      securitySchemes: {
        bearerJwt: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "An access token of the configured issuer (RFC 9068 JWT, or opaque with introspection): Authorization: Bearer <token>",
        },
        dpop: {
          type: "http",
          scheme: "DPoP",
          description: "A DPoP-bound access token (RFC 9449): Authorization: DPoP <token> with a DPoP proof header",
        },
        signInCookie: {
          type: "apiKey",
          in: "cookie",
          name: options.cookieName ?? DEFAULT_SESSION_COOKIE,
          description: "The host session of a browser signed in at /auth/login (unsafe methods of .csrf() routes also need the CSRF token)",
        },
      },
    },
  };
  if (unlisted.length > 0) doc["x-routes-unlisted"] = unlisted;
  return doc;
}
