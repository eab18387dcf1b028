/**
 * Valibot schemas of the API: path parameters, request bodies and query strings (checked at the
 * edge by the validators of api.ts), and the records the service returns (used only to describe
 * them in the OpenAPI document). One place, so the document cannot drift from what the server
 * accepts.
 */
import type { ConversionConfig } from "@valibot/to-json-schema";
import * as v from "valibot";
import { CAPABILITY_KINDS, ENGINES, EVENT_TYPES, EXECUTION_KINDS, EXECUTION_STATUSES, SESSION_STATUSES } from "../domain/records.ts";
import { LIMIT_NAMES, type LimitName, SESSION_LIMITS } from "../live/limits.ts";

// ---------------------------------------------------------------------------------------------
// Building blocks

const nonEmpty = (what: string, max = 1024) =>
  v.pipe(v.string(), v.minLength(1, `${what} must not be empty`), v.maxLength(max, `${what} is longer than ${max} characters`));
/** A UUID in any case, read lower-case (ids are stored lower-case). */
const uuid = v.pipe(v.string(), v.uuid("must be a UUID"), v.toLowerCase());
/** A positive integer up to `max` (a limit: no accepted value may overflow a timer or a counter). */
const limit = (max: number, description: string) =>
  v.pipe(
    v.number(),
    v.safeInteger("must be an integer"),
    v.minValue(1, "must be a positive integer"),
    v.maxValue(max, `must be at most ${max}`),
    v.description(`${description}; at most ${max}`),
  );
/** A JSON object (not an array, not null). (`v.record` would take an array as an object.) */
const jsonObject = v.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  "must be a JSON object",
);
const timestamp = v.pipe(v.string(), v.isoTimestamp(), v.description("RFC 3339, UTC, milliseconds"));
/** A query value that must be a decimal integer; `min` 1 for positive, 0 for non-negative. */
const queryInteger = (min: 0 | 1, description: string) =>
  v.pipe(
    v.string(),
    v.regex(min === 1 ? /^0*[1-9][0-9]*$/ : /^[0-9]+$/, min === 1 ? "must be a positive integer" : "must be a non-negative integer"),
    v.description(description),
    v.transform((text) => Math.min(Number(text), Number.MAX_SAFE_INTEGER)),
  );

// ---------------------------------------------------------------------------------------------
// Settings

/** One entry per row of the limits table, described from it. */
const limitsEntries = Object.fromEntries(LIMIT_NAMES.map((name) => {
  const row = SESSION_LIMITS[name];
  return [name, limit(row.maximum, `${row.description} (default ${row.default})`)];
})) as { [K in LimitName]: ReturnType<typeof limit> };
const resolverEntries = {
  roots: v.array(nonEmpty("a root")),
  extensions: v.array(v.pipe(v.string(), v.regex(/^\.[A-Za-z0-9]+$/, "must look like .js"))),
  allow_absolute_repo_imports: v.boolean(),
};
const runtimeEntries = { esm: v.boolean(), strict: v.boolean(), console: v.boolean() };

export const SettingsSchema = v.object({
  limits: v.object(limitsEntries),
  resolver: v.object(resolverEntries),
  runtime: v.object(runtimeEntries),
});

/** PATCH body: any group, any field; unknown fields anywhere are INVALID_REQUEST. */
export const SettingsPatchBody = v.object({
  limits: v.optional(v.partial(v.strictObject(limitsEntries))),
  resolver: v.optional(v.partial(v.strictObject(resolverEntries))),
  runtime: v.optional(v.partial(v.strictObject(runtimeEntries))),
});

// ---------------------------------------------------------------------------------------------
// Path parameters

export const TemplateParams = v.object({ template_id: uuid });
export const SessionParams = v.object({ session_id: uuid });
export const ExecutionParams = v.object({ execution_id: uuid });

// ---------------------------------------------------------------------------------------------
// Request bodies

export const CreateTemplateBody = v.object({
  name: nonEmpty("name", 200),
  engine: v.optional(v.picklist(ENGINES, `must be one of ${ENGINES.join(", ")}`)),
});

export const CapabilityBody = v.object({
  kind: v.picklist(CAPABILITY_KINDS, `must be one of ${CAPABILITY_KINDS.join(", ")}`),
  name: nonEmpty("name", 200),
  enabled: v.optional(v.boolean()),
  config: v.optional(jsonObject),
});

export const StartupFileBody = v.object({
  path: nonEmpty("path"),
  order_index: v.optional(v.pipe(v.number(), v.safeInteger("must be an integer"))),
  mode: v.optional(v.string()),
});

export const NameBody = v.object({ name: nonEmpty("name", 200) });

export const CreateSessionBody = v.object({
  template_id: uuid,
  workspace_id: nonEmpty("workspace_id", 200),
  base_commit_oid: nonEmpty("base_commit_oid", 200),
  worktree_path: nonEmpty("worktree_path", 4096),
});

export const ReplBody = v.object({
  session_id: uuid,
  input: v.string(),
});

export const RunFileBody = v.object({
  session_id: uuid,
  path: nonEmpty("path"),
  args: v.optional(jsonObject),
  env: v.optional(jsonObject),
});

// ---------------------------------------------------------------------------------------------
// Query strings

export const SessionsQuery = v.object({
  status: v.optional(v.picklist(SESSION_STATUSES, `must be one of ${SESSION_STATUSES.join(", ")}`)),
});

export const MAX_EXECUTIONS_LIMIT = 1000;
export const ExecutionsQuery = v.object({
  session_id: uuid,
  limit: v.optional(queryInteger(1, `how many, newest first (default 50; above ${MAX_EXECUTIONS_LIMIT} reads as ${MAX_EXECUTIONS_LIMIT})`)),
});

export const EventsQuery = v.object({
  after_seq: v.optional(queryInteger(0, "only events with a greater seq")),
});

export const WorktreeFileQuery = v.object({
  root: v.pipe(v.string(), v.startsWith("/", "must be an absolute path"), v.description("absolute path of the worktree")),
  path: v.pipe(nonEmpty("path"), v.description("path of the file, relative to root")),
});

export const LibraryFileQuery = v.object({
  path: v.pipe(nonEmpty("path"), v.description("path of the file in the library directory")),
});

// ---------------------------------------------------------------------------------------------
// Records (responses)

export const TemplateSchema = v.object({ id: uuid, name: v.string(), engine: v.string(), created_at: timestamp, updated_at: timestamp });

export const CapabilitySchema = v.object({
  id: uuid,
  template_id: uuid,
  kind: v.picklist(CAPABILITY_KINDS),
  name: v.string(),
  enabled: v.boolean(),
  config: jsonObject,
});

export const StartupFileSchema = v.object({ id: uuid, template_id: uuid, path: v.string(), order_index: v.number(), mode: v.string() });

export const TemplateEntrySchema = v.object({ template_id: uuid, name: v.string() });

export const TemplateDetailSchema = v.object({
  ...TemplateSchema.entries,
  settings: SettingsSchema,
  capabilities: v.array(CapabilitySchema),
  startup_files: v.array(StartupFileSchema),
  modules: v.array(TemplateEntrySchema),
  libraries: v.array(TemplateEntrySchema),
});

export const SessionSchema = v.object({
  id: uuid,
  template_id: uuid,
  workspace_id: v.string(),
  base_commit_oid: v.string(),
  worktree_path: v.string(),
  status: v.picklist(SESSION_STATUSES),
  created_at: timestamp,
  closed_at: v.optional(timestamp),
  last_error: v.optional(v.string()),
});

export const ExecutionSchema = v.object({
  id: uuid,
  session_id: uuid,
  kind: v.picklist(EXECUTION_KINDS),
  input: v.optional(v.string()),
  path: v.optional(v.string()),
  args: jsonObject,
  env: jsonObject,
  status: v.picklist(EXECUTION_STATUSES),
  started_at: timestamp,
  ended_at: v.optional(timestamp),
  result: v.optional(v.object({ type: v.string(), preview: v.string(), json: v.optional(v.unknown()) })),
  error: v.optional(v.object({ message: v.string(), stack: v.optional(v.string()), limit: v.optional(v.string()) })),
  metrics: v.object({ duration_ms: v.number(), events: v.number(), output_bytes: v.number() }),
});

export const EventSchema = v.object({
  execution_id: uuid,
  seq: v.pipe(v.number(), v.integer(), v.minValue(1)),
  ts: timestamp,
  type: v.picklist(EVENT_TYPES),
  payload: jsonObject,
});

export const ReplExecutionSchema = v.object({ ...ExecutionSchema.entries, events: v.array(EventSchema) });

export const ErrorEnvelopeSchema = v.object({
  error: v.object({ code: v.string(), message: v.string(), details: v.optional(jsonObject) }),
});

export const HealthSchema = v.object({ status: v.literal("ok") });

export const RuntimeSummarySchema = v.object({
  active_sessions: v.pipe(v.number(), v.integer()),
  active_session_ids: v.array(v.string()),
});

export const RuntimeMemorySchema = v.object({
  rss_bytes: v.optional(v.pipe(v.number(), v.integer())),
  heap_used_bytes: v.optional(v.pipe(v.number(), v.integer())),
});

/** Named records, as `components.schemas` of the OpenAPI document. */
export const COMPONENTS = {
  Template: TemplateSchema,
  TemplateDetail: TemplateDetailSchema,
  Settings: SettingsSchema,
  Capability: CapabilitySchema,
  StartupFile: StartupFileSchema,
  TemplateEntry: TemplateEntrySchema,
  Session: SessionSchema,
  Execution: ExecutionSchema,
  ReplExecution: ReplExecutionSchema,
  Event: EventSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
  Health: HealthSchema,
  RuntimeSummary: RuntimeSummarySchema,
  RuntimeMemory: RuntimeMemorySchema,
} as const;

/**
 * How hono-openapi (through @valibot/to-json-schema) turns these schemas into the OpenAPI
 * document: JSON Schema 2020-12 (OpenAPI 3.1). Records are described with `definitions:
 * COMPONENTS` added (see api.ts), as references to `components.schemas`.
 */
export const JSON_SCHEMA: ConversionConfig = {
  target: "draft-2020-12",
  // Query values are strings on the wire: describe what is sent, before any transformation.
  typeMode: "input",
  errorMode: "ignore",
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  overrideSchema: ({ valibotSchema }) => (valibotSchema === jsonObject ? { type: "object" } : undefined),
};
