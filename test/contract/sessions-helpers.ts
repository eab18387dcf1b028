// deno-lint-ignore-file no-explicit-any -- JSON read back from a service, typed where it is checked
/**
 * Shared helpers for the session service's contract suites: starting a service, JSON calls,
 * worktrees and library files that exist on every runtime (a temp directory on Node and Deno,
 * uploads to R2 on workerd), and a loopback HTTP server whose answers the test releases (a
 * sandbox awaiting it keeps an execution running without holding the server's thread).
 * Not a test file; every `sessions-*.test.ts` imports from here.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, expect } from "vitest";
import { type RunningService, type StartOptions, startService } from "../runtimes/service.ts";

export const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const MISSING_ID = "00000000-0000-4000-8000-000000000000";

export interface Sessions {
  svc: RunningService;
  /** `http://127.0.0.1:<port>/api/v1` */
  api: string;
}

/**
 * Starts a session service with an in-memory (Node, Deno) or fresh Durable Object (workerd)
 * store. `libraries` are files of its library directory.
 */
export async function startSessions(options: StartOptions & { libraries?: Record<string, string> } = {}): Promise<Sessions> {
  const { libraries, ...start } = options;
  const args = [...(start.args ?? [])];
  if (!args.includes("--db")) args.push("--db", ":memory:");
  let libraryDir: string | undefined;
  if (libraries && start.args?.includes("--library-dir") !== true) {
    libraryDir = await writeTree(libraries);
    args.push("--library-dir", libraryDir);
  }
  const svc = await startService("sessions", { ...start, args });
  const sessions = { svc, api: `${svc.baseUrl}/api/v1` };
  if (libraries && svc.runtime === "workerd") {
    for (const [path, text] of Object.entries(libraries)) await upload(sessions, `library-files?path=${encodeURIComponent(path)}`, text);
  }
  return sessions;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** One API call; `body` is sent as JSON unless it is a string (sent as is, still labelled JSON). */
export async function call<T = any>(s: Sessions, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  const res = await fetch(`${s.api}${path}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get("content-type") ?? "").includes("application/json")) parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export const get = <T = any>(s: Sessions, path: string) => call<T>(s, "GET", path);
export const post = <T = any>(s: Sessions, path: string, body?: unknown) => call<T>(s, "POST", path, body);
export const del = <T = any>(s: Sessions, path: string) => call<T>(s, "DELETE", path);
export const patch = <T = any>(s: Sessions, path: string, body?: unknown) => call<T>(s, "PATCH", path, body);

/** Asserts the documented error envelope with this status and code. */
export function expectError(res: Reply, status: number, code: string): { code: string; message: string; details?: Record<string, any> } {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(Object.keys(res.body)).toEqual(["error"]);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe("string");
  expect(res.body.error.message.length).toBeGreaterThan(0);
  return res.body.error;
}

/** Asserts a successful JSON reply and returns its body. */
export function expectOk<T = any>(res: Reply<T>, status = 200): T {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

let templateCounter = 0;
export const uniqueName = (prefix = "t") => `${prefix}-${Date.now().toString(36)}-${++templateCounter}`;

export interface TemplateSetup {
  settings?: Record<string, Record<string, unknown>>;
  modules?: string[];
  libraries?: string[];
  capabilities?: { kind: string; name: string; enabled?: boolean; config?: Record<string, unknown> }[];
  startupFiles?: { path: string; order_index?: number }[];
}

/** Creates a template and configures it; returns its id. */
export async function createTemplate(s: Sessions, setup: TemplateSetup = {}): Promise<string> {
  const { id } = expectOk(await post(s, "/templates", { name: uniqueName() }), 201);
  if (setup.settings) expectOk(await patch(s, `/templates/${id}/settings`, setup.settings));
  for (const name of setup.modules ?? []) expectOk(await post(s, `/templates/${id}/modules`, { name }), 201);
  for (const name of setup.libraries ?? []) expectOk(await post(s, `/templates/${id}/libraries`, { name }), 201);
  for (const c of setup.capabilities ?? []) expectOk(await post(s, `/templates/${id}/capabilities`, c), 201);
  for (const f of setup.startupFiles ?? []) expectOk(await post(s, `/templates/${id}/startup-files`, f), 201);
  return id as string;
}

export const sessionBody = (templateId: string, worktree: string) => ({
  template_id: templateId,
  workspace_id: "ws-1",
  base_commit_oid: "0123456789abcdef0123456789abcdef01234567",
  worktree_path: worktree,
});

/** A ready session of a new template with this setup, in a worktree with these files. */
export async function createSession(
  s: Sessions,
  setup: TemplateSetup = {},
  files: Record<string, string> = {},
): Promise<{ id: string; templateId: string; worktree: string }> {
  const templateId = await createTemplate(s, setup);
  const worktree = await makeWorktree(s, files);
  const session = expectOk(await post(s, "/sessions", sessionBody(templateId, worktree)), 201);
  expect(session.status).toBe("ready");
  return { id: session.id, templateId, worktree };
}

export const repl = (s: Sessions, session_id: string, input: string) => post(s, "/executions/repl", { session_id, input });

// ---------------------------------------------------------------------------------------------
// Files

/** Temporary directories this test file made; removed when its tests are done. */
const temporary: string[] = [];
afterAll(() => Promise.all(temporary.splice(0).map((dir) => rm(dir, { recursive: true, force: true }))));

async function writeTree(files: Record<string, string>, root?: string): Promise<string> {
  let dir = root;
  if (dir === undefined) temporary.push(dir = await mkdtemp(join(tmpdir(), "sessions-")));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

async function upload(s: Sessions, pathAndQuery: string, text: string): Promise<void> {
  const res = await fetch(`${s.api}/${pathAndQuery}`, { method: "PUT", body: text, headers: { "content-type": "text/plain" } });
  expect(res.status, await res.clone().text()).toBe(204);
}

let worktreeCounter = 0;

/**
 * A worktree with these files: a temp directory on Node and Deno; on workerd, objects uploaded
 * to R2 under a fresh absolute root (an empty worktree gets a `.keep` so the directory exists).
 */
export async function makeWorktree(s: Sessions, files: Record<string, string> = {}): Promise<string> {
  if (s.svc.runtime !== "workerd") return writeTree(files);
  const root = `/worktrees/w${Date.now().toString(36)}-${++worktreeCounter}`;
  const all = Object.keys(files).length > 0 ? files : { ".keep": "" };
  for (const [path, text] of Object.entries(all)) {
    await upload(s, `worktree-files?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}`, text);
  }
  return root;
}

/** Adds files to an existing worktree. */
export async function addFiles(s: Sessions, worktree: string, files: Record<string, string>): Promise<void> {
  if (s.svc.runtime !== "workerd") {
    await writeTree(files, worktree);
    return;
  }
  for (const [path, text] of Object.entries(files)) {
    await upload(s, `worktree-files?root=${encodeURIComponent(worktree)}&path=${encodeURIComponent(path)}`, text);
  }
}

export const SECRET = "TOP-SECRET-OUTSIDE-THE-WORKTREE";

/**
 * A name inside `worktree` that leads to a file outside it holding SECRET. On Node and Deno: a
 * symlink `name` to a file in another directory. R2 (workerd) has no symlinks; the equivalent is
 * a relative path to a file stored under a sibling root, so the same refusal is asserted.
 */
export async function escapeRoute(s: Sessions, worktree: string, name: string): Promise<string> {
  if (s.svc.runtime !== "workerd") {
    const outside = await writeTree({ "secret.js": `console.log(${JSON.stringify(SECRET)}); "${SECRET}"` });
    await symlink(join(outside, "secret.js"), join(worktree, name));
    return name;
  }
  const sibling = `${worktree}-outside`;
  await upload(s, `worktree-files?root=${encodeURIComponent(sibling)}&path=secret.js`, `console.log(${JSON.stringify(SECRET)}); "${SECRET}"`);
  return `../${sibling.split("/").at(-1)}/secret.js`;
}

// ---------------------------------------------------------------------------------------------
// A loopback server that holds requests until the test releases them

export interface HoldServer {
  /** `127.0.0.1:<port>`, the `net` capability name that allows it. */
  host: string;
  url: string;
  /** Resolves when the n-th request (1-based) has arrived. */
  arrived(n?: number): Promise<void>;
  /** How many requests arrived so far. */
  count(): number;
  /** How many held requests the client gave up on (closed before an answer). */
  abandoned(): number;
  /** Answers every held request (and later ones at once) with this body. */
  release(body?: string): void;
  close(): Promise<void>;
}

export async function holdServer(): Promise<HoldServer> {
  const held: ServerResponse[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let count = 0;
  let abandoned = 0;
  let released: string | undefined;
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    count++;
    res.on("close", () => {
      if (!res.writableEnded) abandoned++;
    });
    for (const w of waiters.filter((w) => w.n <= count)) w.resolve();
    if (released !== undefined) res.end(released);
    else held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/`,
    count: () => count,
    abandoned: () => abandoned,
    arrived: (n = 1) => (count >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    release(body = "released") {
      released = body;
      for (const res of held.splice(0)) res.end(body);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Template setup whose sessions may fetch from `hold` (module http + a net capability). */
export const fetchesFrom = (hold: HoldServer): TemplateSetup => ({
  modules: ["http"],
  capabilities: [{ kind: "net", name: hold.host, enabled: true }],
});

/** REPL input that waits for `hold` to answer, then evaluates to the answer's body. */
export const awaitHold = (hold: HoldServer) => `(await require("http").fetch(${JSON.stringify(hold.url)})).body`;
