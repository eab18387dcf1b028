/**
 * Fuzzing the session service from its own OpenAPI document (GET /api/v1/openapi.json): every
 * operation, with requests built from its path, query and body schemas, then mutated (see
 * fuzz.ts). Invariants, for every case:
 * - never a 5xx, and the connection is answered;
 * - an error is the documented envelope `{"error": {code, message, details?}}` with a code the
 *   document lists for that operation and status (or NOT_FOUND / METHOD_NOT_ALLOWED);
 * - a success has the status the document gives;
 * - nothing is stored on a 4xx (templates with their `updated_at`, sessions, the fixture
 *   session's executions), except what the docs say a refused request stores: a session that
 *   crashed at startup, an execution that hit a limit (both named in `details`);
 * - the service answers /health;
 * and at the end, a bystander session on the same sandbox thread is still ready and keeps its
 * state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createSession, expectOk, get, patch, post, repl, type Sessions, startSessions } from "../contract/sessions-helpers.ts";
import {
  check,
  contentType,
  encode,
  encodePathSegment,
  encoding,
  expectAnswered,
  fromSchema,
  type FuzzRequest,
  type FuzzResponse,
  type JsonSchema,
  judge,
  mutate,
  mutation,
  nastyString,
  refusedByServer,
  runs,
  send,
  type Verdict,
} from "./fuzz.ts";

interface OpenApiOperation {
  parameters: { name: string; in: "path" | "query"; required: boolean; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { "x-error-codes"?: string[] }>;
}

interface Operation {
  method: string;
  path: string;
  spec: OpenApiOperation;
}

let s: Sessions;
let doc: { paths: Record<string, Record<string, OpenApiOperation>>; components: { schemas: Record<string, JsonSchema> } };
let operations: Operation[];
/** Ids and paths the generator prefers, so that requests reach past the 404s. */
let fixture: { templateId: string; sessionId: string; executionId: string; worktree: string };
let bystander: { id: string };

beforeAll(async () => {
  // One sandbox thread: a case that took a thread down would crash the bystander too.
  s = await startSessions({ args: ["--threads", "1"], libraries: { "greet.js": "globalThis.greet = (n) => 'hi ' + n;" } });
  doc = expectOk(await get(s, "/openapi.json"));
  operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, spec]) => ({ method: method.toUpperCase(), path, spec }))
  );
  const limits = { cpu_ms: 500, wall_ms: 2000 };
  const session = await createSession(s, { settings: { limits }, modules: ["path"] }, { "main.js": "args", "lib/a.js": "1 + 1" });
  const execution = expectOk(await repl(s, session.id, "1 + 1"), 201);
  fixture = { templateId: session.templateId, sessionId: session.id, executionId: execution.id, worktree: session.worktree };
  bystander = await createSession(s, { settings: { limits } });
  expectOk(await repl(s, bystander.id, "globalThis.kept = 41"), 201);
});

afterAll(() => s?.svc.stop());

const API = "/api/v1";

/** Values the generator prefers for fields and parameters with these names. */
const known = () => ({
  template_id: fc.constantFrom(fixture.templateId, fixture.templateId.toUpperCase()),
  session_id: fc.constant(fixture.sessionId),
  execution_id: fc.constant(fixture.executionId),
  worktree_path: fc.constantFrom(
    fixture.worktree,
    `${fixture.worktree}/lib`,
    "/nonexistent",
    `${fixture.worktree}/${"n".repeat(256)}`,
    `${fixture.worktree}\u0000x`,
  ),
  path: fc.constantFrom("main.js", "lib/a.js", "lib", "missing.js", "../main.js", "n".repeat(256), "a\u0000b.js"),
  name: fc.constantFrom("fs", "path", "http", "env", "JSON", "greet.js", "greet", "vendor/x.js", "../x"),
  input: fc.constantFrom(
    "1 + 1",
    "console.log('x'); 2",
    "throw new Error('x')",
    "let d = []; for (let i = 0; i < 5000; i++) d = [d]; d",
    "args",
    "({a: 1})",
    "await 1",
    "}{",
  ),
  status: fc.constantFrom("ready", "closed", "crashed", "starting"),
});

/** A path parameter: usually the fixture's, sometimes a random UUID (both "clean": the route is
 * matched and the value well formed), sometimes junk. */
function pathValue(name: string): fc.Arbitrary<{ value: string; clean: boolean }> {
  const k = known() as Record<string, fc.Arbitrary<unknown>>;
  const preferred = name === "name" ? fc.constantFrom("fs", "path", "greet.js") : ((k[name] as fc.Arbitrary<string> | undefined) ?? fc.constant("x"));
  return fc.oneof(
    { weight: 6, arbitrary: preferred.map((value) => ({ value, clean: true })) },
    { weight: 1, arbitrary: fc.uuid().map((value) => ({ value, clean: true })) },
    { weight: 1, arbitrary: nastyString.map((v) => ({ value: v === "" ? "%20" : v, clean: false })) },
  );
}

/** What the request is, for the oracle: whether only its body decides the answer, and the verdict
 * of its operation's schema on that body. */
interface Intent {
  /** Path, query, method and content type are all as documented. */
  clean: boolean;
  verdict?: Verdict;
  /** The method is not one the path serves. */
  unserved: boolean;
}

/** A request for one operation: path and query from its parameters, a body from its schema, mutated. */
function requestFor(op: Operation): fc.Arbitrary<FuzzRequest & { intent: Intent }> {
  const params = op.spec.parameters ?? [];
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query");
  const jsonSchema = op.spec.requestBody?.content["application/json"]?.schema;
  const textBody = op.spec.requestBody?.content["text/plain"] !== undefined;
  const ctx = { resolve: (ref: string) => doc.components.schemas[ref.split("/").pop()!]!, known: known() };
  return fc
    .record({
      pathValues: fc.tuple(...pathParams.map((p) => pathValue(p.name))),
      query: fc.record(
        Object.fromEntries(
          queryParams.map((p) => [
            p.name,
            fc.oneof(
              { weight: 4, arbitrary: fromSchema(p.schema, ctx, p.name).map((v) => ({ value: String(v), clean: true })) },
              { weight: 1, arbitrary: nastyString.map((value) => ({ value, clean: false })) },
            ),
          ]),
        ),
        { requiredKeys: [] },
      ),
      extraQuery: fc.option(fc.constantFrom("unknown=1", "limit=1&limit=2", "after_seq=-1", "%zz=1"), { freq: 8 }),
      body: jsonSchema ? (fromSchema(jsonSchema, ctx) as fc.Arbitrary<Record<string, unknown>>) : fc.constant(undefined),
      mutation,
      encoding,
      contentType,
      otherMethod: fc.option(fc.constantFrom("GET", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "POST"), { freq: 12 }),
    })
    .map(({ pathValues, query, extraQuery, body, mutation: m, encoding: enc, contentType: type, otherMethod }) => {
      let path = op.path;
      pathParams.forEach((p, i) => (path = path.replace(`{${p.name}}`, encodePathSegment(pathValues[i]!.value))));
      const queryValues = query as Record<string, { value: string; clean: boolean }>;
      const qs = new URLSearchParams(Object.entries(queryValues).map(([k, v]) => [k, v.value])).toString();
      const requiredQuery = queryParams.filter((p) => p.required).every((p) => queryValues[p.name] !== undefined);
      const search = [qs, extraQuery].filter(Boolean).join("&");
      const method = otherMethod ?? op.method;
      const headers: Record<string, string> = {};
      let bytes: Uint8Array | undefined;
      let label = `${method} ${op.path}`;
      const served = Object.keys(doc.paths[op.path]!).map((m) => m.toUpperCase());
      const unserved = !served.includes(method) && !(method === "HEAD" && served.includes("GET"));
      const clean = method === op.method &&
        pathValues.every((p) => p.clean) &&
        Object.values(queryValues).every((v) => v.clean) &&
        !extraQuery &&
        requiredQuery &&
        ["application/json", "application/json; charset=utf-8", "application/problem+json"].includes(type);
      let verdict: Verdict | undefined;
      if (jsonSchema && body !== undefined) {
        const mutated = mutate(body, m);
        bytes = encode(mutated, enc);
        if (type !== "") headers["content-type"] = type;
        label += ` (${m.kind}, ${enc}, ${type || "no content-type"})`;
        if (clean && enc === "json") verdict = judge(jsonSchema, new TextDecoder().decode(bytes), ctx.resolve);
      } else if (textBody) {
        bytes = new TextEncoder().encode("console.log(1)");
        headers["content-type"] = "text/plain";
      }
      const intent: Intent = { clean: clean && pathValues.every((p) => p.clean), verdict, unserved: unserved && pathValues.every((p) => p.clean) };
      return { method, path: `${API}${path}${search ? `?${search}` : ""}`, headers, body: bytes, label, intent };
    });
}

/** Everything a refused request must leave as it was. */
async function fingerprint(): Promise<string> {
  const [templates, sessions, executions] = await Promise.all([
    get(s, "/templates"),
    get(s, "/sessions"),
    get(s, `/executions?session_id=${fixture.sessionId}&limit=1000`),
  ]);
  return JSON.stringify([templates.body, sessions.body, (executions.body as unknown[]).length]);
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const ALWAYS_ALLOWED = new Set(["NOT_FOUND", "METHOD_NOT_ALLOWED"]);

function checkAnswer(op: Operation, req: FuzzRequest & { intent: Intent }, res: FuzzResponse): void {
  const where = `${req.label}: ${res.status} ${res.text.slice(0, 300)}`;
  expectAnswered(req, res);
  if (res.status === 0) return;
  expect(res.status, where).toBeLessThan(500);
  if (refusedByServer(res)) return;
  const code = (res.json as { error?: { code?: string } } | undefined)?.error?.code;
  // A method the path does not serve, TRACE included, is 405 with Allow.
  if (req.intent.unserved) {
    expect([res.status, code], where).toEqual([405, "METHOD_NOT_ALLOWED"]);
    expect(res.headers.allow, where).toBeTruthy();
  }
  // The body alone decides: the documented code for every unknown or ill-typed field.
  const verdict = req.intent.verdict;
  if (verdict) {
    if (verdict.tooDeep) expect([res.status, code], `${where} (nested deeper than 64)`).toEqual([400, "INVALID_REQUEST"]);
    else if (verdict.unknown.length && verdict.invalid.length) {
      expect([res.status, ["INVALID_REQUEST", "VALIDATION_ERROR"].includes(code!)], where).toEqual([400, true]);
    } else if (verdict.unknown.length) expect([res.status, code], `${where} (unknown: ${verdict.unknown})`).toEqual([400, "INVALID_REQUEST"]);
    else if (verdict.invalid.length) expect([res.status, code], `${where} (invalid: ${verdict.invalid})`).toEqual([400, "VALIDATION_ERROR"]);
    else {
      expect(code, `${where} (a valid body)`).not.toBe("INVALID_REQUEST");
      // The one check the schema cannot state: a worktree_path must name an existing directory.
      if (code === "VALIDATION_ERROR") {
        const issues = (res.json as { error: { details?: { issues?: { path: string }[] } } }).error.details?.issues ?? [];
        expect(issues.map((i) => i.path), `${where} (a valid body)`).toEqual(["worktree_path"]);
      }
    }
  }
  if (res.status < 400) {
    if (req.method === op.method) expect(Object.keys(op.spec.responses), where).toContain(String(res.status));
    return;
  }
  expect(String(res.headers["content-type"]), where).toMatch(/^application\/json/);
  const body = res.json as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  expect(body && Object.keys(body), where).toEqual(["error"]);
  const error = body!.error!;
  expect(typeof error.code, where).toBe("string");
  expect(typeof error.message === "string" && error.message.length > 0, where).toBe(true);
  expect(Object.keys(error).every((k) => ["code", "message", "details"].includes(k)), where).toBe(true);
  if (error.details !== undefined) expect(typeof error.details === "object" && error.details !== null && !Array.isArray(error.details), where).toBe(true);
  if (!ALWAYS_ALLOWED.has(error.code as string) && req.method === op.method) {
    const documented = op.spec.responses[String(res.status)]?.["x-error-codes"] ?? [];
    expect(documented, `${where}: ${error.code} is not documented for ${res.status}`).toContain(error.code);
  }
}

/** A refused request that stores something by design names it in `details`. */
const storesByDesign = (res: FuzzResponse) => {
  const details = (res.json as { error?: { details?: Record<string, unknown> } } | undefined)?.error?.details;
  return details !== undefined && ("session_id" in details || "execution_id" in details);
};

describe("the session API, fuzzed from its OpenAPI document", () => {
  it("every one of the operations is generated", () => {
    expect(operations.length).toBeGreaterThanOrEqual(31);
  });

  it("never a 5xx, the documented error shape and codes, nothing stored on a 4xx, always healthy", async () => {
    const reached = new Set<string>();
    // Operations with a body are where most can go wrong: they come up twice as often.
    const weighted = operations.flatMap((op) => (op.spec.requestBody ? [op, op] : [op]));
    const arbitrary = fc.constantFrom(...weighted).chain((op) => requestFor(op).map((req) => ({ op, req })));
    const numRuns = runs(300);
    let cases = 0;
    await check("sessions", arbitrary, numRuns, async ({ op, req }) => {
      const mutating = MUTATING.has(req.method);
      const before = mutating ? await fingerprint() : undefined;
      const res = await send(s.svc.baseUrl, req);
      reached.add(`${op.method} ${op.path}`);
      checkAnswer(op, req, res);
      if (before !== undefined && res.status >= 400 && !storesByDesign(res)) {
        expect(await fingerprint(), `${req.label}: ${res.status} ${res.text.slice(0, 200)} changed stored state`).toBe(before);
      }
      expect((await get(s, "/health")).status, `${req.label}: unhealthy afterwards`).toBe(200);
      // Every so often: the session on the same thread, which no case names, is untouched.
      if (++cases % 25 === 0) expect((await get(s, `/sessions/${bystander.id}`)).body.status, `after ${req.label}: the bystander session`).toBe("ready");
    });
    // With a few hundred cases, nearly every operation comes up; all of them with FUZZ_RUNS >= 2.
    if (numRuns >= 200) expect(reached.size, [...reached].join(", ")).toBeGreaterThan(operations.length * 0.6);
  });

  it("every limit at its documented maximum leaves the other sessions on the thread alone", async () => {
    const patchOp = doc.paths["/templates/{template_id}/settings"]!.patch!;
    const limits = (patchOp.requestBody!.content["application/json"]!.schema.properties!.limits as JsonSchema).properties!;
    const other = await createSession(s);
    for (const [name, schema] of Object.entries(limits)) {
      // The largest value the document allows (any safe integer, where it states no maximum).
      const value = schema.maximum ?? Number.MAX_SAFE_INTEGER;
      const templateId = expectOk(await post(s, "/templates", { name: `edge-${name}-${Date.now()}` }), 201).id as string;
      const res = await patch(s, `/templates/${templateId}/settings`, { limits: { [name]: value } });
      expect(res.status, `${name} = ${value}: ${JSON.stringify(res.body)}`).toBe(200);
      const session = await post(s, "/sessions", { template_id: templateId, workspace_id: "w", base_commit_oid: "b", worktree_path: fixture.worktree });
      expect(session.status, `a session with ${name} = ${value}: ${JSON.stringify(session.body)}`).toBe(201);
      const run = expectOk(await repl(s, session.body.id, "1 + 1"), 201);
      expect(run.status, `${name} = ${value}: ${JSON.stringify(run.error)}`).toBe("ok");
      await new Promise((r) => setTimeout(r, 20));
      for (const id of [other.id, bystander.id, session.body.id]) {
        expect(expectOk(await get(s, `/sessions/${id}`)).status, `${name} = ${value}: session ${id}`).toBe("ready");
      }
    }
  });

  it("the bystander session on the same thread is still ready and keeps its state", async () => {
    expect(expectOk(await get(s, `/sessions/${bystander.id}`)).status).toBe("ready");
    expect(expectOk(await repl(s, bystander.id, "kept + 1"), 201).result.json).toBe(42);
    expect(expectOk(await get(s, "/runtime/summary")).active_session_ids).toContain(bystander.id);
  });
});
