/**
 * Session service: sessions (create with libraries and startup files, crashes, list and filter,
 * close and DELETE) and the runtime summary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  createSession,
  createTemplate,
  del,
  escapeRoute,
  expectError,
  expectOk,
  get,
  makeWorktree,
  MISSING_ID,
  post,
  repl,
  RFC3339_MS,
  SECRET,
  sessionBody,
  type Sessions,
  startSessions,
  UUID,
} from "./sessions-helpers.ts";
import { currentRuntime } from "../runtimes/service.ts";

let s: Sessions;
beforeAll(async () => {
  s = await startSessions({
    libraries: { "greet.js": "globalThis.greet = (n) => 'hello ' + n;", "bad.js": "throw new Error('bad library');" },
  });
});
afterAll(() => s?.svc.stop());

const sessionIds = async (query = "") => (expectOk(await get(s, `/sessions${query}`)) as { id: string }[]).map((x) => x.id);
const liveIds = async () => expectOk(await get(s, "/runtime/summary")).active_session_ids as string[];

describe("session create", () => {
  it("POST /sessions is 201 with the ready session; GET /sessions/{id} shows the same record", async () => {
    const templateId = await createTemplate(s);
    const worktree = await makeWorktree(s);
    const body = sessionBody(templateId, worktree);
    const session = expectOk(await post(s, "/sessions", body), 201);
    expect(Object.keys(session)).toEqual(["id", "template_id", "workspace_id", "base_commit_oid", "worktree_path", "status", "created_at"]);
    expect(session).toEqual({ id: expect.stringMatching(UUID), ...body, status: "ready", created_at: expect.stringMatching(RFC3339_MS) });
    expect(expectOk(await get(s, `/sessions/${session.id}`))).toEqual(session);
    expect(await liveIds()).toContain(session.id);
  });

  it("loads libraries, then runs startup files in ascending order_index, before the session is ready", async () => {
    const files = {
      "a.js": "globalThis.order = (globalThis.order || []).concat('a');",
      "b.js": "globalThis.order = (globalThis.order || []).concat('b'); globalThis.early = greet('startup');",
      "lib/c.js": "globalThis.order = (globalThis.order || []).concat('c');",
    };
    const { id } = await createSession(
      s,
      { libraries: ["greet.js"], startupFiles: [{ path: "a.js", order_index: 5 }, { path: "lib/c.js", order_index: 9 }, { path: "b.js", order_index: -2 }] },
      files,
    );
    const res = expectOk(await repl(s, id, "[order.join(','), early, greet('repl')]"), 201);
    expect(res.result.json).toEqual(["b,a,c", "hello startup", "hello repl"]);
  });

  it("refuses an unknown template with 404 TEMPLATE_NOT_FOUND and stores nothing", async () => {
    const before = await sessionIds();
    expectError(await post(s, "/sessions", sessionBody(MISSING_ID, await makeWorktree(s))), 404, "TEMPLATE_NOT_FOUND");
    expect(await sessionIds()).toEqual(before);
  });

  it("refuses a worktree_path that is not an absolute path of an existing directory (400 VALIDATION_ERROR)", async () => {
    const templateId = await createTemplate(s);
    const worktree = await makeWorktree(s, { "file.js": "1" });
    const before = await sessionIds();
    for (const path of ["relative/dir", "", `${worktree}/missing-dir`, `${worktree}/file.js`]) {
      const err = expectError(await post(s, "/sessions", sessionBody(templateId, path)), 400, "VALIDATION_ERROR");
      expect(err.details?.issues).toEqual([expect.objectContaining({ path: "worktree_path" })]);
    }
    // Where worktrees are uploaded rather than on a disk (workerd), the error says how. On a disk
    // a path outside the worktree roots is refused whether it exists or not (sessions-roots.test.ts).
    if (currentRuntime() === "workerd") {
      const missing = expectError(await post(s, "/sessions", sessionBody(templateId, "/never/uploaded")), 400, "VALIDATION_ERROR");
      expect(missing.message).toContain("upload the files first with PUT /api/v1/worktree-files?root=%2Fnever%2Fuploaded&path=<file>");
    } else {
      expect(expectError(await post(s, "/sessions", sessionBody(templateId, `${worktree}/never-made`)), 400, "VALIDATION_ERROR").message)
        .toBe("worktree_path is not an existing directory");
      expectError(await post(s, "/sessions", sessionBody(templateId, "/never/uploaded")), 422, "INVALID_PATH");
    }
    expect(await sessionIds()).toEqual(before);
  });

  it("bad bodies are 400 and store nothing", async () => {
    const templateId = await createTemplate(s);
    const worktree = await makeWorktree(s);
    const good = sessionBody(templateId, worktree);
    const before = await sessionIds();
    for (const field of Object.keys(good)) {
      const { [field]: _gone, ...rest } = good as Record<string, string>;
      const err = expectError(await post(s, "/sessions", rest), 400, "VALIDATION_ERROR");
      expect(err.details?.issues).toEqual([expect.objectContaining({ path: field })]);
    }
    expectError(await post(s, "/sessions", { ...good, template_id: "nope" }), 400, "VALIDATION_ERROR");
    expectError(await post(s, "/sessions", { ...good, workspace_id: 7 }), 400, "VALIDATION_ERROR");
    expectError(await post(s, "/sessions", { ...good, status: "ready" }), 400, "INVALID_REQUEST");
    expectError(await post(s, "/sessions", JSON.stringify(good).slice(0, -1)), 400, "INVALID_REQUEST");
    expect(await sessionIds()).toEqual(before);
  });
});

describe("startup failures", () => {
  it("a startup file that throws: 422 STARTUP_FAILED naming the session, which is crashed with last_error and not live", async () => {
    const templateId = await createTemplate(s, { startupFiles: [{ path: "boom.js" }] });
    const worktree = await makeWorktree(s, { "boom.js": "throw new Error('kaboom at startup');" });
    const err = expectError(await post(s, "/sessions", sessionBody(templateId, worktree)), 422, "STARTUP_FAILED");
    expect(err.message).toContain("kaboom at startup");
    const id = err.details?.session_id as string;
    expect(id).toMatch(UUID);
    const session = expectOk(await get(s, `/sessions/${id}`));
    expect(session).toMatchObject({ id, status: "crashed", last_error: expect.stringContaining("kaboom at startup") });
    expect(session.closed_at).toBeUndefined();
    expect(await liveIds()).not.toContain(id);
    expect(await sessionIds("?status=crashed")).toContain(id);
    expectError(await repl(s, id, "1"), 409, "SESSION_NOT_READY");
  });

  it("a missing startup file: 404 FILE_NOT_FOUND naming the session, which is crashed", async () => {
    const templateId = await createTemplate(s, { startupFiles: [{ path: "missing.js" }] });
    const err = expectError(await post(s, "/sessions", sessionBody(templateId, await makeWorktree(s))), 404, "FILE_NOT_FOUND");
    expect(err.details).toMatchObject({ path: "missing.js", session_id: expect.stringMatching(UUID) });
    expect(expectOk(await get(s, `/sessions/${err.details!.session_id}`))).toMatchObject({
      status: "crashed",
      last_error: expect.stringContaining("missing.js"),
    });
  });

  it("a startup file that leaves the worktree through a symlink is 422 INVALID_PATH before any script runs", async () => {
    const worktree = await makeWorktree(s, { "ok.js": "globalThis.ran = true;" });
    const path = await escapeRoute(s, worktree, "init.js");
    const templateId = await createTemplate(s);
    const added = await post(s, `/templates/${templateId}/startup-files`, { path });
    if (s.svc.runtime === "workerd") {
      // R2 has no symlinks: the only way out is the path itself, refused when the file is added.
      expectError(added, 422, "INVALID_PATH");
      return;
    }
    expectOk(added, 201);
    const err = expectError(await post(s, "/sessions", sessionBody(templateId, worktree)), 422, "INVALID_PATH");
    expect(JSON.stringify(err)).not.toContain(SECRET);
    expect(expectOk(await get(s, `/sessions/${err.details!.session_id}`))).toMatchObject({ status: "crashed" });
  });

  it("a library that throws while loading: 422 STARTUP_FAILED naming the library, crashed", async () => {
    const templateId = await createTemplate(s, { libraries: ["bad.js"] });
    const err = expectError(await post(s, "/sessions", sessionBody(templateId, await makeWorktree(s))), 422, "STARTUP_FAILED");
    expect(err.message).toContain("bad.js");
    expect(err.message).toContain("bad library");
    expect(expectOk(await get(s, `/sessions/${err.details!.session_id}`))).toMatchObject({ status: "crashed", last_error: err.message });
  });
});

describe("session list", () => {
  it("GET /sessions is a bare array, oldest first, filtered by ?status", async () => {
    const a = await createSession(s);
    const b = await createSession(s);
    expectOk(await post(s, `/sessions/${b.id}/close`));
    const all = await sessionIds();
    expect(all.indexOf(b.id)).toBeGreaterThan(all.indexOf(a.id));
    const ready = expectOk(await get(s, "/sessions?status=ready"));
    expect(ready.map((x: { id: string }) => x.id)).toContain(a.id);
    expect(ready.every((x: { status: string }) => x.status === "ready")).toBe(true);
    const closed = await sessionIds("?status=closed");
    expect(closed).toContain(b.id);
    expect(closed).not.toContain(a.id);
    expect(expectOk(await get(s, "/sessions?status=starting"))).toEqual([]);
  });

  it("an unknown status, a repeated one or an unknown parameter is 400", async () => {
    expectError(await get(s, "/sessions?status=running"), 400, "VALIDATION_ERROR");
    expectError(await get(s, "/sessions?status=READY"), 400, "VALIDATION_ERROR");
    expectError(await get(s, "/sessions?status=ready&status=closed"), 400, "VALIDATION_ERROR");
    expectError(await get(s, "/sessions?state=ready"), 400, "INVALID_REQUEST");
  });
});

describe("session close", () => {
  it("POST /sessions/{id}/close: 200, closed with closed_at, runtime gone; again: the same record", async () => {
    const { id } = await createSession(s);
    const closed = expectOk(await post(s, `/sessions/${id}/close`));
    expect(closed).toMatchObject({ id, status: "closed", closed_at: expect.stringMatching(RFC3339_MS) });
    expect(closed.last_error).toBeUndefined();
    expect(await liveIds()).not.toContain(id);
    expect(expectOk(await post(s, `/sessions/${id}/close`))).toEqual(closed);
    expect(expectOk(await get(s, `/sessions/${id}`))).toEqual(closed);
    expectError(await repl(s, id, "1"), 409, "SESSION_NOT_READY");
  });

  it("DELETE /sessions/{id} is the same close", async () => {
    const { id } = await createSession(s);
    const closed = expectOk(await del(s, `/sessions/${id}`));
    expect(closed).toMatchObject({ id, status: "closed", closed_at: expect.stringMatching(RFC3339_MS) });
    expect(expectOk(await del(s, `/sessions/${id}`))).toEqual(closed);
    expect(expectOk(await post(s, `/sessions/${id}/close`))).toEqual(closed);
  });

  it("closing a crashed session keeps it crashed", async () => {
    const templateId = await createTemplate(s, { startupFiles: [{ path: "boom.js" }] });
    const worktree = await makeWorktree(s, { "boom.js": "throw new Error('no');" });
    const id = expectError(await post(s, "/sessions", sessionBody(templateId, worktree)), 422, "STARTUP_FAILED").details!.session_id;
    const crashed = expectOk(await get(s, `/sessions/${id}`));
    expect(expectOk(await post(s, `/sessions/${id}/close`))).toEqual(crashed);
  });

  it("unknown ids are 404 SESSION_NOT_FOUND; malformed ones 400 VALIDATION_ERROR", async () => {
    for (const [method, suffix] of [["GET", ""], ["DELETE", ""], ["POST", "/close"]] as const) {
      expectError(await call(s, method, `/sessions/${MISSING_ID}${suffix}`), 404, "SESSION_NOT_FOUND");
      expectError(await call(s, method, `/sessions/12345${suffix}`), 400, "VALIDATION_ERROR");
    }
  });

  it("a session outlives its template's deletion", async () => {
    const { id, templateId } = await createSession(s);
    expect((await del(s, `/templates/${templateId}`)).status).toBe(204);
    expect(expectOk(await get(s, `/sessions/${id}`)).status).toBe("ready");
    expect(expectOk(await repl(s, id, "40 + 2"), 201).result.json).toBe(42);
  });
});

describe("runtime memory (beyond the spec)", () => {
  it("gives the daemon's resident set and heap in bytes on Node and Deno, nothing on workerd", async () => {
    const m = expectOk(await get(s, "/runtime/memory"));
    if (s.svc.runtime === "workerd") expect(m).toEqual({});
    else {
      expect(Object.keys(m)).toEqual(["rss_bytes", "heap_used_bytes"]);
      expect(m.rss_bytes).toBeGreaterThan(m.heap_used_bytes);
      expect(m.heap_used_bytes).toBeGreaterThan(1024 * 1024);
    }
  });
});

describe("runtime summary", () => {
  it("counts only runtimes alive in memory", async () => {
    const a = await createSession(s);
    const b = await createSession(s);
    const summary = expectOk(await get(s, "/runtime/summary"));
    expect(Object.keys(summary)).toEqual(["active_sessions", "active_session_ids"]);
    expect(summary.active_sessions).toBe(summary.active_session_ids.length);
    expect(summary.active_session_ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expectOk(await post(s, `/sessions/${a.id}/close`));
    const after = expectOk(await get(s, "/runtime/summary"));
    expect(after.active_sessions).toBe(summary.active_sessions - 1);
    expect(after.active_session_ids).not.toContain(a.id);
    const ready = await sessionIds("?status=ready");
    expect([...after.active_session_ids].sort()).toEqual([...ready].sort());
  });
});
