/**
 * Session service: what sandboxed code can and cannot do, seen through HTTP. Isolation from the
 * server while a session runs, the time and memory limits, escape attempts, and the module
 * catalog with each capability that gates it (fs writes, net hosts, env variables, globals).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasSettled } from "../../apps/sessions/live/testing.ts";
import {
  addFiles,
  createSession,
  escapeRoute,
  expectError,
  expectOk,
  get,
  type HoldServer,
  holdServer,
  post,
  repl,
  SECRET,
  type Sessions,
  startSessions,
} from "./sessions-helpers.ts";

let s: Sessions;
let hold: HoldServer;
beforeAll(async () => {
  // Host variables the service could expose; only `env` capabilities decide which a script sees.
  s = await startSessions({ env: { DEMO_TOKEN: "demo-token-value", DEMO_REGION: "eu-test", UNLISTED_SECRET: "never-visible" } });
  hold = await holdServer();
});
afterAll(async () => {
  await hold?.close();
  await s?.svc.stop();
});

const value = async (sessionId: string, input: string) => {
  const e = expectOk(await repl(s, sessionId, input), 201);
  expect(e.status, JSON.stringify(e.events)).toBe("ok");
  return e.result.json;
};
const thrown = async (sessionId: string, input: string) => {
  const e = expectOk(await repl(s, sessionId, input), 201);
  expect(e.status, JSON.stringify(e.events)).toBe("error");
  return e.error.message as string;
};

describe("a long execution never blocks the server", () => {
  it("while one session runs a 2-second loop, /health, reads and other sessions answer", async () => {
    const busy = await createSession(s);
    const other = await createSession(s);
    const loop = repl(s, busy.id, "const t0 = Date.now(); while (Date.now() - t0 < 2000) {} 'looped'");
    // Let the loop start (its execution row is stored before it runs).
    await new Promise((r) => setTimeout(r, 300));
    const health = await get(s, "/health");
    const read = await get(s, `/sessions/${other.id}`);
    const busyReply = await repl(s, busy.id, "1");
    const otherValue = s.svc.runtime === "workerd" ? undefined : await value(other.id, "6 * 7");
    // Blocked, each would have waited for the loop and come after its answer; this is an order,
    // not a latency, so a loaded machine does not break it.
    const answeredDuringLoop = !(await hasSettled(loop));
    expect(expectOk(health)).toEqual({ status: "ok" });
    expect(expectOk(read).status).toBe("ready");
    const done = expectOk(await loop, 201);
    expect(done.result.json).toBe("looped");
    if (s.svc.runtime === "workerd") {
      // Local workerd runs every object on one thread (docs/sessions-runtime.md): the requests
      // wait for the loop, then get the right answers; the busy one ran after the loop ended.
      expect(expectOk(busyReply, 201).status).toBe("ok");
    } else {
      expect(answeredDuringLoop).toBe(true);
      expectError(busyReply, 409, "SESSION_BUSY");
      // Another session ran code while the loop held its own session's thread.
      expect(otherValue).toBe(42);
    }
  });
});

describe("limits hold", () => {
  // How soon after cpu_ms it ends is lib/sandbox's test, on a clock of its own (limits.test.ts):
  // a loaded machine stretches any wall-clock figure here.
  it("an infinite loop ends as timeout at cpu_ms, and the session answers the next input", async () => {
    const { id } = await createSession(s, { settings: { limits: { cpu_ms: 300 } } });
    const e = expectOk(await repl(s, id, "while (true) {}"), 201);
    expect(e.status).toBe("timeout");
    expect(e.metrics.duration_ms).toBeGreaterThanOrEqual(300);
    expect(await value(id, "'still here'")).toBe("still here");
  });

  it("a loop that catches and retries cannot outlive the timeout", async () => {
    const { id } = await createSession(s, { settings: { limits: { cpu_ms: 200 } } });
    const e = expectOk(await repl(s, id, "for (;;) { try { while (true) {} } catch (e) {} }"), 201);
    expect(e.status).toBe("timeout");
  });

  it("a memory bomb ends as error; the server and other sessions are unaffected", async () => {
    const bombed = await createSession(s, { settings: { limits: { mem_mb: 32 } } });
    const bystander = await createSession(s);
    await value(bystander.id, "globalThis.kept = [1, 2, 3]; kept.length");
    const e = expectOk(await repl(s, bombed.id, "const hoard = []; while (true) hoard.push(new Array(100000).fill(7));"), 201);
    expect(e.status).toBe("error");
    expect(e.error.message).toMatch(/out of memory/i);
    expect(expectOk(await get(s, "/health"))).toEqual({ status: "ok" });
    expect(await value(bystander.id, "kept.join(',')")).toBe("1,2,3");
    expect(await value(bombed.id, "'usable again'")).toBe("usable again");
    expect(expectOk(await get(s, `/sessions/${bombed.id}`)).status).toBe("ready");
  });

  it("deep recursion is a RangeError-like error, not a crash", async () => {
    const { id } = await createSession(s);
    expect(await thrown(id, "(function f() { return f() + 1 })()")).toMatch(/stack/i);
    expect(await value(id, "1")).toBe(1);
  });
});

describe("escape attempts fail", () => {
  it("no host globals: process, require of host modules, Deno, fetch (timers are the sandbox's own)", async () => {
    const { id } = await createSession(s);
    expect(await value(id, "[typeof process, typeof Deno, typeof fetch, typeof Buffer, typeof global]")).toEqual(
      Array(5).fill("undefined"),
    );
    expect(await value(id, "[typeof setTimeout, setTimeout.constructor === Function, typeof setTimeout(() => {}, 0)]")).toEqual(["function", true, "number"]);
    expect(await thrown(id, "require('child_process')")).toMatch(/Cannot find module 'child_process'/);
    expect(await thrown(id, "require('fs')")).toMatch(/Cannot find module 'fs'/);
  });

  it("constructor tricks reach only the sandbox's own global", async () => {
    const { id } = await createSession(s);
    expect(await value(id, "const g = (function () {}).constructor('return this')(); [g === globalThis, typeof g.process]")).toEqual([
      true,
      "undefined",
    ]);
    expect(await thrown(id, "this.constructor.constructor('return process')()")).toMatch(/'?process'? is not defined/);
    expect(await value(id, "typeof (async function () {}).constructor('return this')")).toBe("function");
    expect(await thrown(id, "console.log.constructor('return process')()")).toMatch(/'?process'? is not defined/);
  });

  it("polluting prototypes stays inside the session", async () => {
    const a = await createSession(s);
    const b = await createSession(s);
    await value(a.id, "Object.prototype.polluted = 'yes'; Array.prototype.map = () => 'hijacked'; 1");
    expect(await value(b.id, "[({}).polluted, [1, 2].map((x) => x * 2)]")).toEqual([null, [2, 4]]);
    // The service's own JSON still has its usual shape.
    const session = expectOk(await get(s, `/sessions/${b.id}`));
    expect(Object.keys(session)).not.toContain("polluted");
    expect(expectOk(await repl(s, a.id, "[1, 2]"), 201).result.json).toEqual([1, 2]);
  });

  it("files outside the worktree cannot be read: absolute paths, .., percent-encoding, symlinks", async () => {
    const session = await createSession(s, { modules: ["fs"] }, { "inside.txt": "inside" });
    const route = await escapeRoute(s, session.worktree, "escape.js");
    expect(await value(session.id, "await require('fs').readFile('inside.txt')")).toBe("inside");
    for (const path of ["/etc/passwd", "../escape.js", "%2e%2e/secret.js", "sub/../../secret.js", route]) {
      const message = await thrown(session.id, `await require('fs').readFile(${JSON.stringify(path)})`);
      expect(message, path).not.toContain(SECRET);
    }
    expect(await thrown(session.id, `await require('fs').readFile(${JSON.stringify(route)})`)).toMatch(/outside|invalid path/i);
  });

  it("the network is unreachable without a net capability", async () => {
    const { id } = await createSession(s, { modules: ["http"] });
    const before = hold.count();
    const message = await thrown(id, `await require('http').fetch(${JSON.stringify(hold.url)})`);
    expect(message).toMatch(/not allowed|ENETACCESS|capability/i);
    expect(hold.count()).toBe(before);
  });
});

describe("module catalog and capabilities", () => {
  it("fs reads the worktree; writes need an fs capability and stay under its directory", async () => {
    const readOnly = await createSession(s, { modules: ["fs"] }, { "data/a.txt": "alpha" });
    expect(await value(readOnly.id, "const fs = require('fs'); [await fs.readFile('data/a.txt'), await fs.readdir('data'), await fs.exists('nope')]")).toEqual([
      "alpha",
      ["a.txt"],
      false,
    ]);
    expect(await thrown(readOnly.id, "await require('fs').writeFile('data/b.txt', 'x')")).toMatch(/EPERM|not allowed|permission/i);

    const writer = await createSession(
      s,
      { modules: ["fs"], capabilities: [{ kind: "fs", name: "out", enabled: true }] },
      { "src/keep.txt": "keep" },
    );
    await value(writer.id, "await require('fs').writeFile('out/result.txt', 'written by the sandbox'); 1");
    expect(await value(writer.id, "await require('fs').readFile('out/result.txt')")).toBe("written by the sandbox");
    expect(await thrown(writer.id, "await require('fs').writeFile('src/keep.txt', 'overwritten')")).toMatch(/EPERM|not allowed|permission/i);
    expect(await value(writer.id, "await require('fs').readFile('src/keep.txt')")).toBe("keep");
    // A file the sandbox wrote is a real worktree file: run-file sees it.
    await value(writer.id, "await require('fs').writeFile('out/made.js', 'args.n * 3'); 1");
    const run = expectOk(await post(s, "/executions/run-file", { session_id: writer.id, path: "out/made.js", args: { n: 5 }, env: {} }), 201);
    expect(run.status).toBe("ok");
  });

  it("a refusal says what to enable: a module the template lacks or withdraws, an fs write, a net host", async () => {
    const bare = await createSession(s);
    expect(await thrown(bare.id, "require('http')")).toBe(
      "Cannot find module 'http': the module \"http\" is not enabled for this session's template: add it to the template's modules " +
        '(POST /api/v1/templates/<template id>/modules {"name": "http"}, or Add module in the web UI), then start a new session ' +
        "(a running session keeps the modules it started with); to reach a host it also needs a net capability naming it " +
        '({kind: "net", name: "api.example.com"})',
    );
    // import says the same; a name that is no catalog module stays Node's plain message.
    expect(await thrown(bare.id, "await import('env')")).toContain('the module "env" is not enabled for this session\'s template');
    expect(await thrown(bare.id, "require('left-pad')")).toBe("Cannot find module 'left-pad'");
    const withdrawn = await createSession(s, { modules: ["path"], capabilities: [{ kind: "module", name: "path", enabled: false }] });
    expect(await thrown(withdrawn.id, "require('path')")).toContain('withdrawn for this session\'s template by its disabled module capability "path"');
    const reader = await createSession(s, { modules: ["fs", "http"] });
    expect(await thrown(reader.id, "await require('fs').writeFile('out/b.txt', 'x')")).toContain(
      '(POST /api/v1/templates/<template id>/capabilities {"kind": "fs", "name": "out"}; "." for the whole worktree), then start a new session',
    );
    expect(await thrown(reader.id, `await require('http').fetch(${JSON.stringify(hold.url)})`)).toContain(
      `{"kind": "net", "name": "${new URL(hold.url).host}"}), then start a new session`,
    );
  });

  it("a disabled fs capability grants nothing", async () => {
    const { id } = await createSession(s, { modules: ["fs"], capabilities: [{ kind: "fs", name: ".", enabled: false }] });
    expect(await thrown(id, "await require('fs').writeFile('x.txt', 'x')")).toMatch(/EPERM|not allowed|permission/i);
  });

  it("path is POSIX path arithmetic", async () => {
    const { id } = await createSession(s, { modules: ["path"] });
    expect(
      await value(id, "const p = require('path'); [p.join('a', 'b', '../c.js'), p.dirname('/x/y/z.js'), p.extname('f.mjs'), p.basename('/a/b.txt', '.txt')]"),
    ).toEqual([
      "a/c.js",
      "/x/y",
      ".mjs",
      "b",
    ]);
  });

  it("http reaches exactly the hosts a net capability lists", async () => {
    hold.release("hello from loopback");
    const { id } = await createSession(s, { modules: ["http"], capabilities: [{ kind: "net", name: hold.host, enabled: true }] });
    const res = await value(id, `const r = await require('http').fetch(${JSON.stringify(hold.url + "path?q=1")}); [r.status, r.body]`);
    expect(res).toEqual([200, "hello from loopback"]);
    const otherPort = hold.host.replace(/:\d+$/, ":1");
    expect(await thrown(id, `await require('http').fetch('http://${otherPort}/')`)).toMatch(/not allowed|ENETACCESS|capability/i);
  });

  it("env shows only the variables env capabilities name, exact or by prefix", async () => {
    const exact = await createSession(s, { modules: ["env"], capabilities: [{ kind: "env", name: "DEMO_TOKEN", enabled: true }] });
    expect(await value(exact.id, "const e = require('env'); [e.DEMO_TOKEN, e.DEMO_REGION ?? null, e.UNLISTED_SECRET ?? null, Object.keys(e).length]")).toEqual([
      "demo-token-value",
      null,
      null,
      1,
    ]);
    const prefix = await createSession(s, { modules: ["env"], capabilities: [{ kind: "env", name: "DEMO_*", enabled: true }] });
    expect(await value(prefix.id, "Object.keys(require('env')).sort()")).toEqual(["DEMO_REGION", "DEMO_TOKEN"]);
    const none = await createSession(s, { modules: ["env"] });
    expect(await value(none.id, "Object.keys(require('env'))")).toEqual([]);
  });

  it("run-file sees args, and env = allowed host variables overlaid by the request's env", async () => {
    const session = await createSession(s, { capabilities: [{ kind: "env", name: "DEMO_*", enabled: true }] }, {});
    await addFiles(s, session.worktree, { "show.js": "console.log(JSON.stringify({ args, env }))" });
    const e = expectOk(
      await post(s, "/executions/run-file", { session_id: session.id, path: "show.js", args: { n: 1 }, env: { DEMO_REGION: "overridden", EXTRA: "x" } }),
      201,
    );
    const line = e.events ?? expectOk(await get(s, `/executions/${e.id}/events`));
    const printed = JSON.parse(line.find((ev: { type: string }) => ev.type === "console").payload.text);
    expect(printed).toEqual({ args: { n: 1 }, env: { DEMO_TOKEN: "demo-token-value", DEMO_REGION: "overridden", EXTRA: "x" } });
  });

  it("a global capability exposes an added module as a global; a disabled module capability withdraws one", async () => {
    const g = await createSession(s, { modules: ["path"], capabilities: [{ kind: "global", name: "path", enabled: true }] });
    expect(await value(g.id, "path.join('a', 'b')")).toBe("a/b");
    const withdrawn = await createSession(s, { modules: ["path", "fs"], capabilities: [{ kind: "module", name: "fs", enabled: false }] });
    expect(await value(withdrawn.id, "typeof require('path').join")).toBe("function");
    expect(await thrown(withdrawn.id, "require('fs')")).toMatch(/Cannot find module 'fs'/);
  });

  it("worktree files load through require with the resolver's extensions", async () => {
    const { id } = await createSession(s, {}, { "lib/util.js": "module.exports = { twice: (x) => x * 2 };" });
    expect(await value(id, "require('./lib/util').twice(21)")).toBe(42);
    expect(await thrown(id, "require('./lib/missing')")).toMatch(/Cannot find module/);
  });
});
