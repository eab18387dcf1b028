/**
 * Session service: bad input never takes the daemon down (issue #20). Each request here once
 * killed the process, stored a value that broke it later, or answered 500 or the wrong code:
 * deeply nested JSON (request bodies, capability configs, run-file args), file-system names the
 * host refuses (NUL, a name over 255 bytes), limits whose timers overflow, ill-typed settings
 * groups, and methods no path serves (TRACE).
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSession,
  createTemplate,
  expectError,
  expectOk,
  get,
  makeWorktree,
  patch,
  post,
  repl,
  sessionBody,
  type Sessions,
  startSessions,
} from "./sessions-helpers.ts";

let s: Sessions;
beforeAll(async () => {
  // One sandbox thread, so every session shares it: a thread lost to one request would crash the others.
  s = await startSessions({ args: ["--threads", "1"] });
});
afterAll(() => s?.svc.stop());

/** `[[[...]]]` as JSON text, `depth` levels deep (built as text: no recursion on either side). */
const nestedText = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
/** A JSON object body with `field` holding `{"a":{"a":...}}` nested `depth` deep, as text. */
const objectWith = (fields: Record<string, unknown>, field: string, depth: number, leaf = nestedText(depth)) =>
  JSON.stringify(fields).replace(/}$/, `${Object.keys(fields).length ? "," : ""}${JSON.stringify(field)}:{"v":${leaf}}}`);

async function healthy(): Promise<void> {
  expectOk(await get(s, "/health"));
}

describe("one depth limit (64) for every JSON value that comes in", () => {
  it("run-file args nested 3,500 deep are 400 INVALID_REQUEST; the daemon and the session live on", async () => {
    const session = await createSession(s, {}, { "main.js": "args" });
    const before = expectOk(await get(s, `/executions?session_id=${session.id}`)).length;
    const res = await post(s, "/executions/run-file", objectWith({ session_id: session.id, path: "main.js" }, "args", 3500));
    const error = expectError(res, 400, "INVALID_REQUEST");
    expect(error.details?.max_depth).toBe(64);
    await healthy();
    expect(expectOk(await get(s, `/executions?session_id=${session.id}`))).toHaveLength(before);
    expect(expectOk(await repl(s, session.id, "6 * 7"), 201).result.json).toBe(42);
  });

  it("a body at the limit is decoded as usual", async () => {
    const session = await createSession(s, {}, { "main.js": "JSON.stringify(args).length" });
    // The body is depth 1, args 2, so args' value may nest 62 more.
    const res = await post(s, "/executions/run-file", objectWith({ session_id: session.id, path: "main.js" }, "args", 62));
    expect(expectOk(res, 201).status).toBe("ok");
    const over = await post(s, "/executions/run-file", objectWith({ session_id: session.id, path: "main.js" }, "args", 63));
    expectError(over, 400, "INVALID_REQUEST");
  });

  it("a capability config nested 3,500 or 5,000 deep is refused and never stored; sessions still start", async () => {
    const templateId = await createTemplate(s);
    for (const depth of [3500, 5000]) {
      const res = await post(s, `/templates/${templateId}/capabilities`, objectWith({ kind: "global", name: `deep${depth}` }, "config", depth));
      expectError(res, 400, "INVALID_REQUEST");
    }
    expect(expectOk(await get(s, `/templates/${templateId}/capabilities`))).toEqual([]);
    const worktree = await makeWorktree(s);
    expect(expectOk(await post(s, "/sessions", sessionBody(templateId, worktree)), 201).status).toBe("ready");
    await healthy();
  });

  it("a settings patch nested too deep is refused, and the settings are unchanged", async () => {
    const templateId = await createTemplate(s);
    const before = expectOk(await get(s, `/templates/${templateId}/settings`));
    const res = await patch(s, `/templates/${templateId}/settings`, `{"resolver":{"roots":${nestedText(5000)}}}`);
    expectError(res, 400, "INVALID_REQUEST");
    expect(expectOk(await get(s, `/templates/${templateId}/settings`))).toEqual(before);
  });

  it("a REPL value nested deeper than the limit comes back without its json; the thread lives on", async () => {
    const bystander = await createSession(s);
    expectOk(await repl(s, bystander.id, "globalThis.kept = 1"), 201);
    const session = await createSession(s);
    for (const depth of [65, 3000, 6000, 9000, 20000]) {
      const res = await repl(s, session.id, `let a${depth} = []; for (let i = 1; i < ${depth}; i++) a${depth} = [a${depth}]; a${depth}`);
      const execution = expectOk(res, 201);
      expect(execution.status, JSON.stringify(execution.error)).toBe("ok");
      expect(execution.result.json).toBeUndefined();
      expect(execution.result.preview).toMatch(/^\[ \[ \[/);
    }
    await healthy();
    expect(expectOk(await repl(s, bystander.id, "kept + 1"), 201).result.json).toBe(2);
    expect(expectOk(await get(s, `/sessions/${bystander.id}`)).status).toBe("ready");
  });
});

describe("file-system names the host refuses are 4xx, checked when they are stored", () => {
  const longName = "n".repeat(256);

  it("a worktree_path with a NUL byte or a 256-character name is 400 VALIDATION_ERROR, nothing stored", async () => {
    const templateId = await createTemplate(s);
    const worktree = await makeWorktree(s);
    const sessionsBefore = expectOk(await get(s, "/sessions")).length;
    for (const path of [`${worktree}/a\u0000b`, `${worktree}/${longName}`, `/${longName}`]) {
      const error = expectError(await post(s, "/sessions", sessionBody(templateId, path)), 400, "VALIDATION_ERROR");
      expect(error.details?.issues?.[0]?.path).toBe("worktree_path");
    }
    expect(expectOk(await get(s, "/sessions"))).toHaveLength(sessionsBefore);
  });

  it("a run-file path with a 256-character name is 422 INVALID_PATH", async () => {
    const session = await createSession(s);
    for (const path of [longName, `dir/${longName}.js`]) {
      expectError(await post(s, "/executions/run-file", { session_id: session.id, path }), 422, "INVALID_PATH");
    }
    await healthy();
  });

  it("a startup file with a 256-character name is refused when added (422 INVALID_PATH), so sessions still start", async () => {
    const templateId = await createTemplate(s);
    expectError(await post(s, `/templates/${templateId}/startup-files`, { path: `${longName}.js` }), 422, "INVALID_PATH");
    expect(expectOk(await get(s, `/templates/${templateId}/startup-files`))).toEqual([]);
    const worktree = await makeWorktree(s);
    expect(expectOk(await post(s, "/sessions", sessionBody(templateId, worktree)), 201).status).toBe("ready");
  });
});

describe("limits have a maximum, and no accepted limit fires a watchdog early", () => {
  const DAY_MS = 86_400_000;

  it("wall_ms and cpu_ms above a day are 400 VALIDATION_ERROR; the other limits have maxima too", async () => {
    const templateId = await createTemplate(s);
    const before = expectOk(await get(s, `/templates/${templateId}/settings`));
    for (
      const limits of [
        { wall_ms: 2147483647 },
        { wall_ms: DAY_MS + 1 },
        { cpu_ms: DAY_MS + 1 },
        { mem_mb: 1025 },
        { max_events: 1_000_001 },
        { max_output_kb: 1_048_577 },
      ]
    ) {
      const error = expectError(await patch(s, `/templates/${templateId}/settings`, { limits }), 400, "VALIDATION_ERROR");
      expect(error.details?.issues?.[0]?.path).toBe(`limits.${Object.keys(limits)[0]}`);
    }
    expect(expectOk(await get(s, `/templates/${templateId}/settings`))).toEqual(before);
  });

  it("a session with wall_ms of a day runs beside others on the same thread without crashing them", async () => {
    const other = await createSession(s);
    const long = await createSession(s, { settings: { limits: { wall_ms: DAY_MS, cpu_ms: DAY_MS } } });
    expect(expectOk(await repl(s, long.id, "1 + 1"), 201).status).toBe("ok");
    expect(expectOk(await repl(s, other.id, "2 + 2"), 201).status).toBe("ok");
    await new Promise((r) => setTimeout(r, 100));
    for (const id of [other.id, long.id]) expect(expectOk(await get(s, `/sessions/${id}`)).status).toBe("ready");
  });
});

describe("ill-typed fields get the documented code", () => {
  it.each([["0", 0], ["a string", "x"], ["null", null], ["an array", []], ["a non-empty array", [1]]])(
    "a settings group that is %s is 400 VALIDATION_ERROR at its path, nothing stored",
    async (_, value) => {
      const templateId = await createTemplate(s);
      const before = expectOk(await get(s, `/templates/${templateId}/settings`));
      for (const group of ["limits", "resolver", "runtime"]) {
        const error = expectError(await patch(s, `/templates/${templateId}/settings`, { [group]: value }), 400, "VALIDATION_ERROR");
        expect(error.details?.issues?.map((i: { path: string }) => i.path)).toEqual([group]);
      }
      expect(expectOk(await get(s, `/templates/${templateId}/settings`))).toEqual(before);
    },
  );

  it("an unknown field inside a group is still 400 INVALID_REQUEST", async () => {
    const templateId = await createTemplate(s);
    const error = expectError(await patch(s, `/templates/${templateId}/settings`, { limits: { gpu_ms: 1 } }), 400, "INVALID_REQUEST");
    expect(error.details?.fields).toEqual(["limits.gpu_ms"]);
  });

  it("an array where a JSON object is expected (config, args, env) is 400 VALIDATION_ERROR", async () => {
    const templateId = await createTemplate(s);
    expectError(await post(s, `/templates/${templateId}/capabilities`, { kind: "global", name: "g", config: [] }), 400, "VALIDATION_ERROR");
    const session = await createSession(s, {}, { "main.js": "1" });
    for (const field of ["args", "env"]) {
      expectError(await post(s, "/executions/run-file", { session_id: session.id, path: "main.js", [field]: [1] }), 400, "VALIDATION_ERROR");
    }
  });
});

describe("405 for every method a path does not serve", () => {
  /** A raw request (fetch refuses to send TRACE). */
  function raw(method: string, path: string): Promise<{ status: number; allow?: string; body: string }> {
    const url = new URL(`${s.api}${path}`);
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }));
      });
      req.on("error", reject);
      req.end();
    });
  }

  it("TRACE on a known path is 405 METHOD_NOT_ALLOWED with Allow", async () => {
    for (
      const [path, allow] of [
        ["/health", "GET"],
        ["/templates", "POST, GET"],
        ["/executions/repl", "POST"],
      ] as const
    ) {
      const res = await raw("TRACE", path);
      expect(res.status, `TRACE ${path}: ${res.body}`).toBe(405);
      expect(res.allow).toBe(allow);
      expect(JSON.parse(res.body).error.code).toBe("METHOD_NOT_ALLOWED");
    }
  });
});
