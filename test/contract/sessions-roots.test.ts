/**
 * Session service: a session's worktree stays inside the worktree roots (issue #28: a page made a
 * session in `/etc` and read `passwd` through the `fs` module). Node and Deno only, where a
 * worktree is a host directory; on workerd it is a prefix of a bucket that holds no host files.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentRuntime, ROOT } from "../runtimes/service.ts";
import { runServiceCli } from "./daemon-helpers.ts";
import { createTemplate, expectError, expectOk, get, post, sessionBody, type Sessions, startSessions } from "./sessions-helpers.ts";

const onDisk = currentRuntime() !== "workerd";

const made: string[] = [];
afterAll(() => Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true }))));
async function tempDir(prefix = "roots-", base = tmpdir()): Promise<string> {
  // node_modules/.cache exists only once a Node entry was bundled: not yet in a fresh clone.
  await mkdir(base, { recursive: true });
  const dir = await mkdtemp(join(base, prefix));
  made.push(dir);
  return dir;
}

const runSessionsCli = (args: string[], env: Record<string, string> = {}) =>
  runServiceCli("sessions", currentRuntime(), ["--db", ":memory:", "--addr", "127.0.0.1:0", ...args], env);

async function sessionCount(s: Sessions): Promise<number> {
  return (expectOk(await get(s, "/sessions")) as unknown[]).length;
}

/** POST /sessions with this worktree: 422 INVALID_PATH naming it, and still no session stored. */
async function refused(s: Sessions, templateId: string, worktree: string): Promise<void> {
  const before = await sessionCount(s);
  const err = expectError(await post(s, "/sessions", sessionBody(templateId, worktree)), 422, "INVALID_PATH");
  expect(err.message).toMatch(/outside the worktree roots/);
  expect(err.details?.worktree_path).toBe(worktree);
  expect(await sessionCount(s)).toBe(before);
}

describe.skipIf(!onDisk)("worktree roots by default: the start directory and the temp directory", () => {
  let s: Sessions;
  let templateId: string;
  beforeAll(async () => {
    s = await startSessions();
    // The measured attack's template: the `fs` module, allowed to write everywhere in the worktree.
    templateId = await createTemplate(s, { modules: ["fs"], capabilities: [{ kind: "fs", name: ".", enabled: true }] });
  });
  afterAll(() => s?.svc.stop());

  it("refuses /etc, /, the home directory and what is above the temp directory (422 INVALID_PATH, nothing stored); the start directory works", async () => {
    for (const path of ["/etc", "/", homedir(), join(homedir(), ".ssh"), "/never/made", tmpdir() + "/.."]) await refused(s, templateId, path);
    expect(await sessionCount(s)).toBe(0);
    const inCwd = await tempDir("roots-cwd-", join(ROOT, "node_modules", ".cache"));
    expectOk(await post(s, "/sessions", sessionBody(templateId, inCwd)), 201);
  });

  it("refuses `..` escapes, with and without a trailing slash, through directories that exist or not", async () => {
    const inside = await tempDir();
    for (const path of [`${inside}/../../etc`, `${inside}/../../etc/`, `${inside}/missing/../../../etc`, `${inside}/./../../../..${homedir()}`]) {
      await refused(s, templateId, path);
    }
  });

  it("refuses a symlink inside a root that leads outside (also a link to a link); one that stays inside works, and fs reads there", async () => {
    const inside = await tempDir();
    await symlink("/etc", join(inside, "etc-link"));
    await symlink(homedir(), join(inside, "home-link"));
    await symlink(join(inside, "etc-link"), join(inside, "link-to-link"));
    for (const name of ["etc-link", "etc-link/", "home-link", "link-to-link", "etc-link/ssl"]) await refused(s, templateId, join(inside, name));
    // The measured attack, once more: nothing of /etc is readable.
    const before = await sessionCount(s);
    await writeFile(join(inside, "hello.txt"), "inside");
    const alias = join(await tempDir(), "alias");
    await symlink(inside, alias);
    const { id } = expectOk(await post(s, "/sessions", sessionBody(templateId, alias)), 201);
    const read = expectOk(await post(s, "/executions/repl", { session_id: id, input: `await require("fs").readFile("hello.txt")` }), 201);
    expect(read.result.json).toBe("inside");
    expect(await sessionCount(s)).toBe(before + 1);
  });

  it("`%2e%2e` in a worktree path is a name, never `..`: it stays inside (no such directory: 400, nothing stored)", async () => {
    const inside = await tempDir();
    const before = await sessionCount(s);
    const err = expectError(await post(s, "/sessions", sessionBody(templateId, `${inside}/%2e%2e/%2e%2e/etc`)), 400, "VALIDATION_ERROR");
    expect(err.message).toBe("worktree_path is not an existing directory");
    await mkdir(join(inside, "%2e%2e", "%2e%2e", "etc"), { recursive: true });
    await refused(s, templateId, `${inside}/%2e%2e/../../../etc`);
    expect(await sessionCount(s)).toBe(before);
  });
});

describe.skipIf(!onDisk)("--worktree-roots", () => {
  it("names the roots instead (flag, or SESSIONS_WORKTREE_ROOTS); a root that is a symlink counts as its target", async () => {
    const root = await tempDir();
    await mkdir(join(root, "work"));
    const link = join(await tempDir(), "root-link");
    await symlink(root, link);
    const elsewhere = await tempDir();
    for (const start of [{ args: ["--worktree-roots", link] }, { env: { SESSIONS_WORKTREE_ROOTS: link } }]) {
      const s = await startSessions(start);
      try {
        const templateId = await createTemplate(s);
        expectOk(await post(s, "/sessions", sessionBody(templateId, join(root, "work"))), 201);
        expectOk(await post(s, "/sessions", sessionBody(templateId, join(link, "work"))), 201);
        await refused(s, templateId, elsewhere);
        await refused(s, templateId, `${link}/..`);
        expect(await sessionCount(s)).toBe(2);
      } finally {
        await s.svc.stop();
      }
    }
  });

  // Found by an attack on this change: the path was kept as written, so swapping the symlink in
  // it for a directory (another session's `fs` can rm and mkdir) moved the session out of its root.
  it("keeps a worktree as its real path: a symlink in the name swapped afterwards cannot move the session out", async () => {
    const base = await tempDir();
    const root = join(base, "root");
    await mkdir(join(root, "inside", "deep"), { recursive: true });
    await mkdir(join(root, "outside"));
    await writeFile(join(root, "outside", "secret.txt"), "decoy inside");
    await mkdir(join(base, "outside"));
    await writeFile(join(base, "outside", "secret.txt"), "SECRET");
    await symlink(join(root, "inside", "deep"), join(root, "s"));
    const s = await startSessions({ args: ["--worktree-roots", root] });
    try {
      const templateId = await createTemplate(s, { modules: ["fs"], capabilities: [{ kind: "fs", name: ".", enabled: true }] });
      const session = expectOk(await post(s, "/sessions", sessionBody(templateId, `${root}/s/../../outside`)), 201);
      expect(session.worktree_path).toBe(join(root, "outside"));
      await rm(join(root, "s"));
      await mkdir(join(root, "s"));
      const read = expectOk(await post(s, "/executions/repl", { session_id: session.id, input: `await require("fs").readFile("secret.txt")` }), 201);
      expect(read.result.json).toBe("decoy inside");
    } finally {
      await s.svc.stop();
    }
  });

  it("refuses to start with a root that is /, the home directory or missing (exit 2, says why)", async () => {
    const home = await tempDir();
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["--worktree-roots", "/"], {}, /\/ is the whole file system/],
      [["--worktree-roots", home], { HOME: home }, /is the home directory as a whole/],
      [["--worktree-roots", "/no/such/dir"], {}, /\/no\/such\/dir does not exist/],
      [[], { SESSIONS_WORKTREE_ROOTS: "/" }, /is the whole file system/],
    ];
    for (const [args, env, message] of cases) {
      const run = await runSessionsCli(args, env);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });
});

describe.skipIf(!onDisk)("the library directory", () => {
  it("may not be / or the home directory (start refused, exit 2); names in it never leave it, symlinks included (422 INVALID_PATH, nothing stored)", async () => {
    const home = await tempDir();
    for (const [dir, env] of [["/", {}], [home, { HOME: home }]] as const) {
      const run = await runSessionsCli(["--library-dir", dir], env);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toMatch(/the library directory .* is (the whole file system|the home directory as a whole)/);
    }
    const libraries = await tempDir();
    await writeFile(join(libraries, "greet.js"), "globalThis.greet = 1;");
    await symlink("/etc/passwd", join(libraries, "passwd.js"));
    await symlink("/etc", join(libraries, "etc"));
    const s = await startSessions({ args: ["--library-dir", libraries] });
    try {
      const id = await createTemplate(s);
      expectOk(await post(s, `/templates/${id}/libraries`, { name: "greet" }), 201);
      for (const name of ["passwd.js", "passwd", "etc/passwd", "../etc/passwd", "/etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "%252e%252e/x.js", "a/../../x.js"]) {
        expectError(await post(s, `/templates/${id}/libraries`, { name }), 422, "INVALID_PATH");
      }
      expect(expectOk(await get(s, `/templates/${id}/libraries`))).toEqual([{ template_id: id, name: "greet" }]);
    } finally {
      await s.svc.stop();
    }
  });
});
