/**
 * Session service: templates and everything under a template (settings, capabilities, startup
 * files, modules, libraries), their record shapes, their errors, and the delete cascade.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  createTemplate,
  del,
  expectError,
  expectOk,
  get,
  MISSING_ID,
  patch,
  post,
  RFC3339_MS,
  type Sessions,
  startSessions,
  uniqueName,
  UUID,
} from "./sessions-helpers.ts";

const DEFAULT_SETTINGS = {
  limits: { cpu_ms: 5000, wall_ms: 30000, mem_mb: 128, max_events: 1000, max_output_kb: 512 },
  resolver: { roots: [], extensions: [".js", ".mjs"], allow_absolute_repo_imports: false },
  runtime: { esm: false, strict: false, console: true },
};

let s: Sessions;
beforeAll(async () => {
  s = await startSessions({
    libraries: { "greet.js": "globalThis.greet = (n) => 'hello ' + n;", "vendor/util.js": "globalThis.util = 1;" },
  });
});
afterAll(() => s?.svc.stop());

const templateNames = async () => (expectOk(await get(s, "/templates")) as { name: string }[]).map((t) => t.name);

describe("templates", () => {
  it("POST /templates creates a template: 201, the record with a generated id and engine jsengine", async () => {
    const name = uniqueName();
    const res = await post(s, "/templates", { name });
    const t = expectOk(res, 201);
    expect(Object.keys(t)).toEqual(["id", "name", "engine", "created_at", "updated_at"]);
    expect(t.id).toMatch(UUID);
    expect(t).toMatchObject({ name, engine: "jsengine" });
    expect(t.created_at).toMatch(RFC3339_MS);
    expect(t.updated_at).toBe(t.created_at);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });

  it("accepts engine jsengine and refuses any other engine with 400 VALIDATION_ERROR, storing nothing", async () => {
    expect(expectOk(await post(s, "/templates", { name: uniqueName(), engine: "jsengine" }), 201).engine).toBe("jsengine");
    const name = uniqueName();
    const err = expectError(await post(s, "/templates", { name, engine: "v8" }), 400, "VALIDATION_ERROR");
    expect(err.details?.issues).toEqual([expect.objectContaining({ path: "engine" })]);
    expect(await templateNames()).not.toContain(name);
  });

  it("GET /templates is a bare array of templates in creation order", async () => {
    const a = expectOk(await post(s, "/templates", { name: uniqueName() }), 201);
    const b = expectOk(await post(s, "/templates", { name: uniqueName() }), 201);
    const list = expectOk(await get(s, "/templates"));
    expect(Array.isArray(list)).toBe(true);
    const ids = list.map((t: { id: string }) => t.id);
    expect(ids.indexOf(a.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(b.id)).toBe(ids.indexOf(a.id) + 1);
    expect(list.find((t: { id: string }) => t.id === a.id)).toEqual(a);
  });

  it("GET /templates/{id} is the detail: default settings and empty lists (never null)", async () => {
    const t = expectOk(await post(s, "/templates", { name: uniqueName() }), 201);
    const detail = expectOk(await get(s, `/templates/${t.id}`));
    expect(detail).toEqual({ ...t, settings: DEFAULT_SETTINGS, capabilities: [], startup_files: [], modules: [], libraries: [] });
    expect(expectOk(await get(s, `/templates/${t.id}/settings`))).toEqual(DEFAULT_SETTINGS);
  });

  it("a duplicate name is 409 CONFLICT", async () => {
    const name = uniqueName();
    expectOk(await post(s, "/templates", { name }), 201);
    expectError(await post(s, "/templates", { name }), 409, "CONFLICT");
    expect((await templateNames()).filter((n) => n === name)).toHaveLength(1);
  });

  it("bad bodies are 400 with the documented code and store nothing", async () => {
    const before = await templateNames();
    const name = uniqueName();
    expectError(await post(s, "/templates", {}), 400, "VALIDATION_ERROR");
    expectError(await post(s, "/templates", { name: "" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, "/templates", { name: 42 }), 400, "VALIDATION_ERROR");
    const unknown = expectError(await post(s, "/templates", { name, colour: "red" }), 400, "INVALID_REQUEST");
    expect(unknown.details).toEqual({ fields: ["colour"] });
    expectError(await post(s, "/templates", `{"name": "${name}"`), 400, "INVALID_REQUEST");
    expectError(await post(s, "/templates", "[1,2]"), 400, "INVALID_REQUEST");
    expectError(await post(s, "/templates", "null"), 400, "INVALID_REQUEST");
    expectError(await call(s, "POST", "/templates", JSON.stringify({ name }), { "content-type": "text/plain" }), 400, "INVALID_REQUEST");
    expectError(await call(s, "POST", "/templates"), 400, "INVALID_REQUEST");
    expect(await templateNames()).toEqual(before);
  });

  it("an unknown id is 404 TEMPLATE_NOT_FOUND on every template route; a malformed one 400 VALIDATION_ERROR", async () => {
    const routes: [string, string, unknown?][] = [
      ["GET", ""],
      ["DELETE", ""],
      ["GET", "/settings"],
      ["PATCH", "/settings", { limits: { cpu_ms: 10 } }],
      ["POST", "/capabilities", { kind: "env", name: "HOME" }],
      ["GET", "/capabilities"],
      ["POST", "/startup-files", { path: "a.js" }],
      ["GET", "/startup-files"],
      ["POST", "/modules", { name: "fs" }],
      ["GET", "/modules"],
      ["DELETE", "/modules/fs"],
      ["POST", "/libraries", { name: "greet.js" }],
      ["GET", "/libraries"],
      ["DELETE", "/libraries/greet.js"],
    ];
    for (const [method, suffix, body] of routes) {
      expectError(await call(s, method, `/templates/${MISSING_ID}${suffix}`, body), 404, "TEMPLATE_NOT_FOUND");
      const bad = expectError(await call(s, method, `/templates/not-a-uuid${suffix}`, body), 400, "VALIDATION_ERROR");
      expect(bad.details?.issues).toEqual([expect.objectContaining({ path: "template_id" })]);
    }
  });

  it("reads an upper-case UUID as the same id", async () => {
    const id = await createTemplate(s);
    expect(expectOk(await get(s, `/templates/${id.toUpperCase()}`)).id).toBe(id);
  });
});

describe("template settings (PATCH, beyond the spec)", () => {
  it("merges a partial document group by group and answers the full settings", async () => {
    const t = expectOk(await post(s, "/templates", { name: uniqueName() }), 201);
    const merged = expectOk(await patch(s, `/templates/${t.id}/settings`, { limits: { cpu_ms: 250 }, runtime: { strict: true } }));
    expect(merged).toEqual({
      ...DEFAULT_SETTINGS,
      limits: { ...DEFAULT_SETTINGS.limits, cpu_ms: 250 },
      runtime: { ...DEFAULT_SETTINGS.runtime, strict: true },
    });
    const again = expectOk(await patch(s, `/templates/${t.id}/settings`, { limits: { max_events: 7 }, resolver: { extensions: [".js"] } }));
    expect(again.limits).toEqual({ ...DEFAULT_SETTINGS.limits, cpu_ms: 250, max_events: 7 });
    expect(again.resolver).toEqual({ ...DEFAULT_SETTINGS.resolver, extensions: [".js"] });
    const detail = expectOk(await get(s, `/templates/${t.id}`));
    expect(detail.settings).toEqual(again);
    expect(detail.updated_at >= t.updated_at).toBe(true);
  });

  it("refuses bad values (400 VALIDATION_ERROR) and unknown fields at any depth (400 INVALID_REQUEST), changing nothing", async () => {
    const t = expectOk(await post(s, "/templates", { name: uniqueName() }), 201);
    for (const cpu_ms of [0, -5, 1.5, "100", null, 1e300]) {
      const err = expectError(await patch(s, `/templates/${t.id}/settings`, { limits: { cpu_ms } }), 400, "VALIDATION_ERROR");
      expect(err.details?.issues).toEqual([expect.objectContaining({ path: "limits.cpu_ms" })]);
    }
    expectError(await patch(s, `/templates/${t.id}/settings`, { runtime: { strict: "yes" } }), 400, "VALIDATION_ERROR");
    expectError(await patch(s, `/templates/${t.id}/settings`, { resolver: { extensions: ["js"] } }), 400, "VALIDATION_ERROR");
    const nested = expectError(await patch(s, `/templates/${t.id}/settings`, { limits: { cpu_ms: 10, gpu_ms: 1 } }), 400, "INVALID_REQUEST");
    expect(nested.details).toEqual({ fields: ["limits.gpu_ms"] });
    expectError(await patch(s, `/templates/${t.id}/settings`, { network: {} }), 400, "INVALID_REQUEST");
    expectError(await patch(s, `/templates/${t.id}/settings`, "{"), 400, "INVALID_REQUEST");
    expect(expectOk(await get(s, `/templates/${t.id}`))).toEqual(expect.objectContaining({ settings: DEFAULT_SETTINGS, updated_at: t.updated_at }));
  });
});

describe("capabilities", () => {
  it("POST adds one (201, enabled false and config {} by default); GET lists them in order", async () => {
    const id = await createTemplate(s);
    const a = expectOk(await post(s, `/templates/${id}/capabilities`, { kind: "env", name: "HOME" }), 201);
    expect(Object.keys(a)).toEqual(["id", "template_id", "kind", "name", "enabled", "config"]);
    expect(a).toEqual({ id: expect.stringMatching(UUID), template_id: id, kind: "env", name: "HOME", enabled: false, config: {} });
    const b = expectOk(await post(s, `/templates/${id}/capabilities`, { kind: "net", name: "example.com", enabled: true, config: { n: [1] } }), 201);
    expect(b).toMatchObject({ kind: "net", enabled: true, config: { n: [1] } });
    expect(expectOk(await get(s, `/templates/${id}/capabilities`))).toEqual([a, b]);
    expect(expectOk(await get(s, `/templates/${id}`)).capabilities).toEqual([a, b]);
  });

  it("every kind of the spec is accepted; the same name under another kind too", async () => {
    const id = await createTemplate(s);
    for (const kind of ["module", "global", "fs", "net", "env"]) expectOk(await post(s, `/templates/${id}/capabilities`, { kind, name: "x" }), 201);
    expect(expectOk(await get(s, `/templates/${id}/capabilities`))).toHaveLength(5);
  });

  it("a duplicate kind+name is 409 CONFLICT; bad input 400; nothing stored", async () => {
    const id = await createTemplate(s);
    expectOk(await post(s, `/templates/${id}/capabilities`, { kind: "env", name: "HOME" }), 201);
    expectError(await post(s, `/templates/${id}/capabilities`, { kind: "env", name: "HOME", enabled: true }), 409, "CONFLICT");
    expectError(await post(s, `/templates/${id}/capabilities`, { kind: "disk", name: "x" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, `/templates/${id}/capabilities`, { kind: "env" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, `/templates/${id}/capabilities`, { kind: "env", name: "A", config: [1] }), 400, "VALIDATION_ERROR");
    expectError(await post(s, `/templates/${id}/capabilities`, { kind: "env", name: "A", enabled: "true" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, `/templates/${id}/capabilities`, { kind: "env", name: "A", scope: "all" }), 400, "INVALID_REQUEST");
    expect(expectOk(await get(s, `/templates/${id}/capabilities`))).toHaveLength(1);
  });
});

describe("startup files", () => {
  it("POST adds one (201, order_index 0 and mode eval by default); GET sorts by order_index, ties in the order added", async () => {
    const id = await createTemplate(s);
    const a = expectOk(await post(s, `/templates/${id}/startup-files`, { path: "late.js", order_index: 10 }), 201);
    expect(Object.keys(a)).toEqual(["id", "template_id", "path", "order_index", "mode"]);
    expect(a).toEqual({ id: expect.stringMatching(UUID), template_id: id, path: "late.js", order_index: 10, mode: "eval" });
    const b = expectOk(await post(s, `/templates/${id}/startup-files`, { path: "first.js", order_index: -1, mode: "eval" }), 201);
    const c = expectOk(await post(s, `/templates/${id}/startup-files`, { path: "lib/zero.js" }), 201);
    const d = expectOk(await post(s, `/templates/${id}/startup-files`, { path: "./lib//also-zero.js", order_index: 0 }), 201);
    expect(d.path).toBe("lib/also-zero.js");
    expect(expectOk(await get(s, `/templates/${id}/startup-files`))).toEqual([b, c, d, a]);
    expect(expectOk(await get(s, `/templates/${id}`)).startup_files).toEqual([b, c, d, a]);
  });

  it("a mode other than eval is 422 STARTUP_MODE_UNSUPPORTED", async () => {
    const id = await createTemplate(s);
    const err = expectError(await post(s, `/templates/${id}/startup-files`, { path: "a.js", mode: "module" }), 422, "STARTUP_MODE_UNSUPPORTED");
    expect(err.details).toEqual({ mode: "module" });
    expect(expectOk(await get(s, `/templates/${id}/startup-files`))).toEqual([]);
  });

  it("absolute paths, .. and percent-encoded dots are 422 INVALID_PATH", async () => {
    const id = await createTemplate(s);
    for (const path of ["/etc/passwd", "../outside.js", "a/../../outside.js", "%2e%2e/outside.js", "%252e%252e%252foutside.js", "..\\outside.js", "C:/x.js"]) {
      const err = expectError(await post(s, `/templates/${id}/startup-files`, { path }), 422, "INVALID_PATH");
      expect(err.details).toEqual({ path });
    }
    expect(expectOk(await get(s, `/templates/${id}/startup-files`))).toEqual([]);
  });

  it("a duplicate path is 409 CONFLICT; bad input 400", async () => {
    const id = await createTemplate(s);
    expectOk(await post(s, `/templates/${id}/startup-files`, { path: "a.js" }), 201);
    expectError(await post(s, `/templates/${id}/startup-files`, { path: "./a.js", order_index: 3 }), 409, "CONFLICT");
    expectError(await post(s, `/templates/${id}/startup-files`, { path: "b.js", order_index: 1.5 }), 400, "VALIDATION_ERROR");
    expectError(await post(s, `/templates/${id}/startup-files`, { path: "" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, `/templates/${id}/startup-files`, { path: "b.js", run: "always" }), 400, "INVALID_REQUEST");
    expect(expectOk(await get(s, `/templates/${id}/startup-files`))).toHaveLength(1);
  });
});

describe("modules", () => {
  it("POST adds a catalog module (201 {template_id, name}); GET lists; DELETE removes (204)", async () => {
    const id = await createTemplate(s);
    const fs = expectOk(await post(s, `/templates/${id}/modules`, { name: "fs" }), 201);
    expect(fs).toEqual({ template_id: id, name: "fs" });
    expectOk(await post(s, `/templates/${id}/modules`, { name: "path" }), 201);
    expect(expectOk(await get(s, `/templates/${id}/modules`))).toEqual([fs, { template_id: id, name: "path" }]);
    const res = await del(s, `/templates/${id}/modules/fs`);
    expect(res.status).toBe(204);
    expect(res.body).toBe("");
    expect(expectOk(await get(s, `/templates/${id}`)).modules).toEqual([{ template_id: id, name: "path" }]);
    expectError(await del(s, `/templates/${id}/modules/fs`), 404, "MODULE_NOT_FOUND");
  });

  it("built-ins and unknown names are 422 MODULE_NOT_ALLOWED; a duplicate is 409 CONFLICT", async () => {
    const id = await createTemplate(s);
    for (const name of ["JSON", "Math", "console", "Promise", "left-pad", "child_process", "FS"]) {
      const err = expectError(await post(s, `/templates/${id}/modules`, { name }), 422, "MODULE_NOT_ALLOWED");
      expect(err.details?.name).toBe(name);
    }
    expectOk(await post(s, `/templates/${id}/modules`, { name: "env" }), 201);
    expectError(await post(s, `/templates/${id}/modules`, { name: "env" }), 409, "CONFLICT");
    expectError(await post(s, `/templates/${id}/modules`, { name: "" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, `/templates/${id}/modules`, { name: "fs", version: 2 }), 400, "INVALID_REQUEST");
    expect(expectOk(await get(s, `/templates/${id}/modules`))).toEqual([{ template_id: id, name: "env" }]);
  });
});

describe("libraries", () => {
  it("POST adds a file of the library directory by name (with or without .js, subdirectories too); DELETE removes it", async () => {
    const id = await createTemplate(s);
    expect(expectOk(await post(s, `/templates/${id}/libraries`, { name: "greet.js" }), 201)).toEqual({ template_id: id, name: "greet.js" });
    expectOk(await post(s, `/templates/${id}/libraries`, { name: "vendor/util" }), 201);
    expect(expectOk(await get(s, `/templates/${id}/libraries`))).toEqual([
      { template_id: id, name: "greet.js" },
      { template_id: id, name: "vendor/util" },
    ]);
    expect((await del(s, `/templates/${id}/libraries/${encodeURIComponent("vendor/util")}`)).status).toBe(204);
    expect(expectOk(await get(s, `/templates/${id}`)).libraries).toEqual([{ template_id: id, name: "greet.js" }]);
    expectError(await del(s, `/templates/${id}/libraries/vendor%2Futil`), 404, "LIBRARY_NOT_FOUND");
  });

  it("a name the directory does not have is 422 LIBRARY_NOT_AVAILABLE; a path-like name never escapes (422 INVALID_PATH)", async () => {
    const id = await createTemplate(s);
    expectError(await post(s, `/templates/${id}/libraries`, { name: "lodash.js" }), 422, "LIBRARY_NOT_AVAILABLE");
    for (const name of ["../greet.js", "/etc/hosts", "%2e%2e/greet.js", "vendor/../../greet.js"]) {
      expectError(await post(s, `/templates/${id}/libraries`, { name }), 422, "INVALID_PATH");
    }
    expectOk(await post(s, `/templates/${id}/libraries`, { name: "greet" }), 201);
    expectError(await post(s, `/templates/${id}/libraries`, { name: "greet" }), 409, "CONFLICT");
    expect(expectOk(await get(s, `/templates/${id}/libraries`))).toEqual([{ template_id: id, name: "greet" }]);
  });
});

describe("template delete", () => {
  it("DELETE cascades to everything the template owns and leaves other templates alone", async () => {
    const setup = {
      settings: { limits: { cpu_ms: 100 } },
      modules: ["fs"],
      libraries: ["greet.js"],
      capabilities: [{ kind: "env", name: "HOME" }],
      startupFiles: [{ path: "init.js" }],
    };
    const doomed = await createTemplate(s, setup);
    const kept = await createTemplate(s, setup);
    const keptBefore = expectOk(await get(s, `/templates/${kept}`));

    const res = await del(s, `/templates/${doomed}`);
    expect(res.status).toBe(204);
    expect(res.body).toBe("");
    for (const suffix of ["", "/settings", "/capabilities", "/startup-files", "/modules", "/libraries"]) {
      expectError(await get(s, `/templates/${doomed}${suffix}`), 404, "TEMPLATE_NOT_FOUND");
    }
    expectError(await del(s, `/templates/${doomed}`), 404, "TEMPLATE_NOT_FOUND");
    expect((await get(s, "/templates")).body.map((t: { id: string }) => t.id)).not.toContain(doomed);
    expect(expectOk(await get(s, `/templates/${kept}`))).toEqual(keptBefore);
  });
});

describe("a narrowed module catalog (SESSIONS_MODULES)", () => {
  let narrow: Sessions;
  beforeAll(async () => {
    narrow = await startSessions({ env: { SESSIONS_MODULES: "path,env" } });
  });
  afterAll(() => narrow?.svc.stop());

  it("allows only the configured names", async () => {
    const id = await createTemplate(narrow);
    expectOk(await post(narrow, `/templates/${id}/modules`, { name: "path" }), 201);
    const err = expectError(await post(narrow, `/templates/${id}/modules`, { name: "fs" }), 422, "MODULE_NOT_ALLOWED");
    expect(err.details?.catalog).toEqual(["path", "env"]);
  });
});
