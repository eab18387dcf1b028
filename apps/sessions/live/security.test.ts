/** Escape attempts from a session's sandbox: each must fail and leave the host untouched. */
import { createServer, type Server } from "node:http";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFileTree } from "#lib/adapters/node/files";
import { loadQuickJS, type SandboxEngine } from "#lib/sandbox";
import { createInProcessRuntimes } from "./in-process.ts";
import { capability, collect, repl, sessionSpec, type SpecOverrides } from "./testing.ts";
import type { LiveRuntimes } from "./types.ts";

let engine: SandboxEngine;
let base: string;
let worktree: string;
let server: Server;
let port: number;
let hits = 0;
let runtimes: LiveRuntimes;

beforeAll(async () => {
  engine = await loadQuickJS();
  base = await mkdtemp(join(tmpdir(), "escape-"));
  worktree = join(base, "worktree");
  await mkdir(join(worktree, "out"), { recursive: true });
  await writeFile(join(worktree, "ok.txt"), "inside");
  await writeFile(join(base, "secret.txt"), "SECRET");
  await symlink(join(base, "secret.txt"), join(worktree, "link.txt"));
  await symlink(base, join(worktree, "out", "up"));
  server = createServer((_req, res) => {
    hits++;
    res.end("reached");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
  runtimes = createInProcessRuntimes(engine, { worktrees: nodeFileTree(), hostEnv: { SECRET_TOKEN: "t0k3n", PUBLIC_NAME: "svc" } });
});
afterAll(async () => {
  await runtimes.shutdown();
  await new Promise<void>((r) => server.close(() => r()));
  await rm(base, { recursive: true, force: true });
});

async function open(overrides: SpecOverrides = {}) {
  const spec = sessionSpec({ worktreePath: worktree, modules: ["fs", "path", "http", "env"], ...overrides });
  await runtimes.open(spec);
  return async (code: string) => (await collect(runtimes, spec.sessionId, repl(code))).outcome;
}

describe("escape attempts fail", () => {
  it("host globals are absent", async () => {
    const run = await open();
    const r = await run(
      "[typeof process, typeof Deno, typeof fetch, typeof Buffer, typeof global, typeof globalThis.require('path').join, typeof WebAssembly, typeof __filename]",
    );
    expect(r.result?.json).toEqual(["undefined", "undefined", "undefined", "undefined", "undefined", "function", "undefined", "undefined"]);
    for (const name of ["node:fs", "fs/promises", "child_process", "os", "worker_threads", "vm"]) {
      expect((await run(`require(${JSON.stringify(name)})`)).error?.message).toBe(`Cannot find module '${name}'`);
    }
  });

  it("constructor tricks reach only the sandbox's own Function", async () => {
    const run = await open();
    const probes = [
      "require('fs').readFile.constructor('return typeof process')()",
      "require('path').join.constructor.constructor('return this')() === globalThis",
      "(async () => {}).constructor('return typeof process')().then((t) => t)",
      "Object.getPrototypeOf(require('http').fetch).constructor('return typeof Deno')()",
      "(() => { try { null.f() } catch (e) { return e.constructor.constructor('return typeof process')() } })()",
      "console.log.constructor('return typeof require(\"env\").SECRET_TOKEN')()",
    ];
    for (const code of probes) {
      const r = await run(code);
      expect([code, r.result?.json]).toEqual([code, code.includes("=== globalThis") ? true : "undefined"]);
    }
  });

  it("prototype pollution stays in the sandbox", async () => {
    const run = await open();
    const r = await run('Object.prototype.polluted = \'yes\'; Array.prototype.evil = 1; JSON.parse(\'{"__proto__": {"viaJson": 1}, "a": 1}\')');
    const json = r.result?.json as Record<string, unknown>;
    expect(Object.getPrototypeOf(json)).toBe(Object.prototype);
    const probe: Record<string, unknown> = {};
    expect([probe.polluted, probe.viaJson, ([] as unknown as Record<string, unknown>).evil]).toEqual([undefined, undefined, undefined]);
    expect((await run("require('fs').writeFile")).status).toBe("ok");
  });

  it("fs cannot reach outside the worktree: .., absolute, percent-encoded, symlinks", async () => {
    const run = await open({ capabilities: [capability("fs", ".")] });
    const attempts = [
      "readFile('../secret.txt')",
      "readFile('/etc/passwd')",
      "readFile('%2e%2e/secret.txt')",
      "readFile('%252e%252e%252fsecret.txt')",
      "readFile('..\\\\secret.txt')",
      "readFile('link.txt')",
      "readFile('out/up/secret.txt')",
      "readdir('out/up')",
      "writeFile('../planted.txt', 'x')",
      "writeFile('link.txt', 'overwritten')",
      "writeFile('out/up/planted.txt', 'x')",
      "rm('out/up/secret.txt')",
    ];
    for (const call of attempts) {
      const r = await run(`await require('fs').${call}`);
      expect([call, r.status, r.error?.message]).toEqual([call, "error", expect.stringMatching(/^(EACCES|ENOENT)/)]);
    }
    expect(await readFile(join(base, "secret.txt"), "utf8")).toBe("SECRET");
    await expect(readFile(join(base, "planted.txt"))).rejects.toThrow();
    expect((await run("await require('fs').readFile('ok.txt')")).result?.json).toBe("inside");
  });

  it("the network is reachable only through a net capability", async () => {
    const before = hits;
    const none = await open();
    expect((await none(`await require('http').fetch('http://127.0.0.1:${port}/')`)).error?.message).toMatch(/no net capability/);
    const other = await open({
      capabilities: [capability("net", "localhost"), capability("net", `127.0.0.1:${port + 1}`), capability("net", `127.0.0.1:${port}`, {}, false)],
    });
    expect((await other(`await require('http').fetch('http://127.0.0.1:${port}/')`)).status).toBe("error");
    expect(hits).toBe(before);
    const allowed = await open({ capabilities: [capability("net", `127.0.0.1:${port}`)] });
    expect((await allowed(`(await require('http').fetch('http://127.0.0.1:${port}/')).body`)).result?.json).toBe("reached");
    expect(hits).toBe(before + 1);
  });

  it("host environment variables are invisible without an env capability", async () => {
    const run = await open({ capabilities: [capability("env", "PUBLIC_*")] });
    expect((await run("JSON.stringify(require('env'))")).result?.json).toBe('{"PUBLIC_NAME":"svc"}');
    expect((await run("typeof env + typeof process")).result?.json).toBe("undefinedundefined");
  });
});
