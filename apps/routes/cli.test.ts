/** The routes command line as a user runs it: the plan table, bad input, and dev mode's reload. */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runToEnd } from "#test/runtimes/processes.ts";
import { type RunningService, startService } from "#test/runtimes/service.ts";
import { issuerUrl } from "./cli.ts";
import type { WorkerBundle } from "./script/read-bundle.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const routesCli = (...args: string[]) => runToEnd(process.execPath, ["lib/adapters/node/run.mjs", "apps/routes/entries/node.ts", ...args], { cwd: ROOT });

describe("routes routes", () => {
  it("prints the plan table, so a reviewer sees at a glance what is public", async () => {
    const { code, stdout } = await routesCli("routes", "--script", "test/contract/fixtures/routes/app.js");
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^METHOD\s+PATTERN\s+ACCESS\s+RESOURCES\s+CSRF\s+ACTION\s+AUDIT\s+AT$/);
    expect(lines[1]).toMatch(/^STATIC\s+\/static\s+static\s+-\s+-\s+-\s+-\s+\/app\.js:9:\d+$/);
    expect(lines).toContainEqual(expect.stringMatching(/^GET\s+\/me\s+auth\s+-\s+-\s+notes:read\s+me\.read\s+\/app\.js:\d+:\d+$/));
    expect(lines).toContainEqual(expect.stringMatching(/^GET\s+\/docs\/:id\s+auth\s+doc\s+-\s+notes:read\s+-/));
    expect(lines).toContainEqual(expect.stringMatching(/^GET\s+\/\s+public\s+/));
  });

  it("prints JSON with --json", async () => {
    const { stdout } = await routesCli("routes", "--script", "test/contract/fixtures/routes/app.js", "--json");
    const rows = JSON.parse(stdout) as { method?: string; pattern: string; access: string; action?: string; audit?: string }[];
    expect(rows.find((r) => r.pattern === "/me")).toMatchObject({ method: "GET", access: "auth", action: "notes:read", audit: "me.read" });
    expect(rows.filter((r) => r.access === "public")).toHaveLength(19);
  });

  it("exits 2 with one line for a missing script, a bad flag, or a script that does not load", async () => {
    expect(await routesCli("routes")).toMatchObject({ code: 2, stderr: "routes: --script FILE is needed (or ROUTES_SCRIPT)\n" });
    expect(await routesCli("serve", "--script", "x.js", "--threads", "many")).toMatchObject({ code: 2, stderr: expect.stringContaining("threads") });
    // Limits are range-checked, as the Worker checks its vars (config.test.ts).
    expect(await routesCli("serve", "--script", "x.js", "--mem-mb", "4096")).toMatchObject({
      code: 2,
      stderr: "routes: mem-mb from flag:--mem-mb: expected a whole number from 1 to 2048\n",
    });
    const policy = await routesCli("routes", "--script", "test/contract/fixtures/routes/app.js", "--policy-file", "apps/routes/auth/testdata/bad-policy.yaml");
    expect(policy).toMatchObject({
      code: 2,
      stderr: 'routes: policy file apps/routes/auth/testdata/bad-policy.yaml: policy at tenants.mach: unknown key "mach"\n',
    });
    const dir = await mkdtemp(join(tmpdir(), "routes-cli-"));
    await writeFile(join(dir, "app.js"), `require("httpmod").app().get("/x", () => 1);`);
    const bad = await routesCli("routes", "--script", join(dir, "app.js"));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("app.get(pattern, handler) was removed");
    await rm(dir, { recursive: true, force: true });
  });
});

describe("routes bundle", () => {
  it("writes the script, the files beside it and the policy a Worker is built with; a bad policy fails the build", async () => {
    const dir = await mkdtemp(join(tmpdir(), "routes-bundle-"));
    const out = join(dir, "bundle.json");
    const ok = await routesCli("bundle", "--script", "examples/routes/app.js", "--policy-file", "examples/routes/policy.yaml", "--out", out);
    expect(ok).toMatchObject({ code: 0, stdout: expect.stringContaining("the policy of examples/routes/policy.yaml") });
    const bundle = JSON.parse(await readFile(out, "utf8")) as WorkerBundle;
    expect(bundle.script.entry).toBe("/app.js");
    expect(Object.keys(bundle.script.files)).toEqual(expect.arrayContaining(["/app.js", "/lib/page.js"]));
    expect(bundle.policy).toBe(await readFile(join(ROOT, "examples/routes/policy.yaml"), "utf8"));
    const bad = await routesCli("bundle", "--script", "examples/routes/app.js", "--policy-file", "apps/routes/auth/testdata/bad-policy.yaml", "--out", out);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown key "mach"') });
    await rm(dir, { recursive: true, force: true });
  });
});

describe("the issuer setting", () => {
  it("is a URL, or a path on this host's own origin for a provider the script mounts", () => {
    expect(issuerUrl("http://127.0.0.1:5556", "127.0.0.1:8080")).toBe("http://127.0.0.1:5556");
    expect(issuerUrl("/idp", "127.0.0.1:8080")).toBe("http://127.0.0.1:8080/idp");
    expect(issuerUrl("/idp/", "0.0.0.0:9000")).toBe("http://127.0.0.1:9000/idp");
    expect(issuerUrl("/idp", "[::1]:8080")).toBe("http://[::1]:8080/idp");
  });
});

describe("routes serve --dev", () => {
  let dir: string;
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("reloads the script when it changes; a broken edit keeps the old routes and shows its error", async () => {
    dir = await mkdtemp(join(tmpdir(), "routes-dev-"));
    const script = join(dir, "app.js");
    await writeFile(script, `const app = require("httpmod").app(); app.get("/").public().handle(() => "v1");`);
    service = await startService("routes", { args: ["--script", script, "--dev", "--threads", "1"], env: { ROUTES_ISSUER: "" } }, "node");
    const text = async (path: string) => (await fetch(service!.baseUrl + path)).text();
    expect(await text("/")).toBe("v1");
    await writeFile(script, `const app = require("httpmod").app(); app.get("/").public().handle(() => "v2"); app.get("/new").public().handle(() => "new");`);
    expect(await text("/")).toBe("v2");
    expect(await text("/new")).toBe("new");
    await writeFile(script, `const app = require("httpmod").app(); app.get("/").public().handle(() => "v3") oops`);
    expect(await text("/")).toBe("v2");
    const page = await text("/_routes");
    expect(page).toContain('id="load-error"');
    expect(page).toContain("SyntaxError");
    expect(service.output()).toContain("script failed to load, keeping the previous routes");
  });
});

describe("routes audit and routes resource put", () => {
  let dir: string;
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("stores resources, and queries what the host recorded, by outcome and actor", async () => {
    dir = await mkdtemp(join(tmpdir(), "routes-db-"));
    const db = `file:${join(dir, "routes.db")}`;
    expect(await routesCli("resource", "put", "--db", db, "--type", "doc", "--id", "d1", "--tenant", "acme", "--attributes", '{"title":"Plan"}')).toMatchObject(
      { code: 0, stdout: "routes: doc d1 stored\n" },
    );
    expect(await routesCli("resource", "put", "--db", db, "--type", "doc", "--id", "d2", "--attributes", "[1]")).toMatchObject({
      code: 2,
      stderr: "routes: --attributes must be a JSON object\n",
    });
    service = await startService("routes", { args: ["--script", "test/contract/fixtures/routes/app.js", "--db", db, "--threads", "1"] }, "node");
    expect((await fetch(`${service.baseUrl}/me`)).status).toBe(401);
    await service.stop();
    service = undefined;
    const denied = await routesCli("audit", "--db", db, "--outcome", "denied", "--since", "1h", "--json");
    expect(denied.code, denied.stderr).toBe(0);
    expect(JSON.parse(denied.stdout)).toEqual([
      expect.objectContaining({ event: "me.read", outcome: "denied", reason: "no_credentials", statusCode: 401, routeName: "GET /me" }),
    ]);
    const table = await routesCli("audit", "--db", db);
    expect(table.stdout.split("\n")[0]).toMatch(/^AT\s+EVENT\s+OUTCOME\s+ACTOR\s+ACTION\s+STATUS\s+REASON\s+ROUTE\s+REQUEST$/);
    expect(table.stdout).toMatch(/me\.read\s+denied\s+-\s+notes:read\s+401\s+no_credentials\s+GET \/me/);
    expect(JSON.parse((await routesCli("audit", "--db", db, "--actor", "nobody", "--json")).stdout)).toEqual([]);
    expect(await routesCli("audit", "--db", db, "--outcome", "maybe")).toMatchObject({
      code: 2,
      stderr: "routes: --outcome must be one of allowed, denied, completed, failed\n",
    });
    expect(await routesCli("audit")).toMatchObject({ code: 2, stderr: "routes: audit needs --db URL (or ROUTES_DB)\n" });
  });
});
