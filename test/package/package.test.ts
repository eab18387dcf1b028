// deno-lint-ignore-file no-explicit-any -- JSON read back from a service, typed where it is checked
/**
 * The npm package as another project gets it: `npm pack` (which builds dist/), the tarball
 * unpacked into a fresh project's node_modules, its dependencies linked from this checkout's
 * node_modules (what `npm install` would fetch; tests use no network). Then, through the
 * package only: the `devservices` command serves the identity provider and runs code in a session
 * (its sandbox thread comes from dist/), and a vitest file imports `devservices/idp/testing`,
 * typechecks against the shipped declarations and passes.
 */
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answersOk, runToEnd, startProcess, waitUntilReady } from "../runtimes/processes.ts";
import { freePort, ROOT } from "../runtimes/service.ts";

let work: string;
let consumer: string;
let bin: string;

const run = (cmd: string, args: string[], cwd: string) => runToEnd(cmd, args, { cwd, env: { ...process.env, NO_COLOR: "1" } });

async function serving<T>(args: string[], health: string, port: number, use: (base: string) => Promise<T>): Promise<T> {
  const child = startProcess(process.execPath, [bin, ...args], { cwd: consumer, env: { ...process.env, LOG_LEVEL: "warn" } });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(child, () => answersOk(base + health), `devservices ${args.join(" ")}`);
    return await use(base);
  } finally {
    await child.stop();
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "devservices-pack-"));
  const packed = await run("npm", ["pack", "--pack-destination", work, "--silent"], ROOT);
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = join(work, packed.stdout.trim().split("\n").at(-1)!);
  consumer = join(work, "consumer");
  const installed = join(consumer, "node_modules", "devservices");
  await mkdir(installed, { recursive: true });
  expect((await run("tar", ["xzf", tarball, "-C", installed, "--strip-components=1"], work)).code).toBe(0);
  for (const name of await readdir(join(ROOT, "node_modules"))) {
    if (name === ".bin" || name === ".cache" || name === "devservices") continue;
    await symlink(join(ROOT, "node_modules", name), join(consumer, "node_modules", name));
  }
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  bin = join(installed, "dist", "devservices.mjs");
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("ships built JavaScript, the declarations and the example, and no TypeScript sources", async () => {
    const files = await readdir(join(consumer, "node_modules", "devservices", "dist"));
    expect(files).toEqual(expect.arrayContaining(["devservices.mjs", "idp-testing.mjs", "routes-thread.mjs", "sessions-thread.mjs", "sessions-ui", "types"]));
    await expect(readdir(join(consumer, "node_modules", "devservices", "apps"))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(join(consumer, "node_modules", "devservices", "examples", "routes"))).toEqual(
      expect.arrayContaining(["app.js", "policy.yaml", "lib", "hello"]),
    );
  });

  it("serves the identity provider through its bin", async () => {
    const port = await freePort();
    const issuer = await serving(["idp", "serve-dev", "--addr", `127.0.0.1:${port}`], "/healthz", port, async (base) => {
      return ((await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer;
    });
    expect(issuer).toBe(`http://localhost:${port}`);
  });

  it("runs code in a session through its bin (the sandbox thread comes from dist/)", async () => {
    const port = await freePort();
    const worktree = join(work, "tree");
    await mkdir(worktree, { recursive: true });
    const result = await serving(["sessions", "serve", "--addr", `127.0.0.1:${port}`, "--db", ":memory:"], "/api/v1/health", port, async (base) => {
      const post = async (path: string, body: unknown) =>
        (await fetch(`${base}/api/v1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }))
          .json() as Promise<any>;
      const template = await post("/templates", { name: "pack" });
      const session = await post("/sessions", { template_id: template.id, workspace_id: "w", base_commit_oid: "HEAD", worktree_path: worktree });
      const page = await (await fetch(`${base}/`)).text();
      return { value: (await post("/executions/repl", { session_id: session.id, input: "6 * 7" })).result, ui: page.includes('<div id="app">') };
    });
    // The web UI ships in the package too.
    expect(result).toEqual({ value: { type: "number", preview: "42", json: 42 }, ui: true });
  });

  it("gives another project's vitest suite startIdp from devservices/idp/testing, with types", async () => {
    await writeFile(
      join(consumer, "idp.test.ts"),
      `import { expect, test } from "vitest";
import { startIdp, type StartedIdp } from "devservices/idp/testing";

test("an in-process identity provider", async () => {
  const idp: StartedIdp = await startIdp({ users: [{ login: "carol", groups: ["admins"] }] });
  const discovery = await (await fetch(idp.issuer + "/.well-known/openid-configuration")).json();
  expect(discovery.issuer).toBe(idp.issuer);
  await idp.stop();
});
`,
    );
    await writeFile(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "es2022", module: "esnext", moduleResolution: "bundler", strict: true, noEmit: true, skipLibCheck: true, types: ["node"] },
        include: ["idp.test.ts"],
      }),
    );
    const typed = await run(process.execPath, [join(consumer, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], consumer);
    expect(typed.code, typed.stdout + typed.stderr).toBe(0);
    const tested = await run(process.execPath, [join(consumer, "node_modules", "vitest", "vitest.mjs"), "run", "--root", consumer], consumer);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/1 passed/);
  });
});
