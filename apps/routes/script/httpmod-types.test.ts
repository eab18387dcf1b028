/**
 * httpmod.d.ts (httpmod-types.ts) against what httpmod.js makes: each interface lists exactly the
 * members the value it describes offers inside the sandbox; examples/routes and
 * testdata/types/good.js type-check with it, and each testdata/types/bad-*.js fails with the
 * error its first line names (the mistakes the declarations exist to catch). TypeScript here is
 * the native compiler (no JavaScript API), so `tsc` runs as a program.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryFileTree } from "#lib/files";
import { runToEnd } from "#test/runtimes/processes.ts";
import { call, scriptHost } from "../testing.ts";
import { DECLARED_VALUES, declaredMembers, httpmodDeclarations } from "./httpmod-types.ts";
import { storeServices } from "./script-services.ts";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const TYPES = join(ROOT, "apps/routes/script/testdata/types");

/** What each value httpmod.js makes offers at run time: own keys, and a class's methods. */
const ENUMERATE = `
const httpmod = require("httpmod");
const app = httpmod.app();
const keys = (o) => Object.keys(o);
const methods = (o) => Object.getOwnPropertyNames(Object.getPrototypeOf(o)).filter((k) => k !== "constructor");
const user = httpmod.user();
const markup = httpmod.html\`<p>\${"x"}</p>\`;
const out = {
  Module: keys(httpmod),
  App: keys(app),
  Started: keys(app.get("/x")),
  Policy: keys(app.get("/x").auth(user)),
  Ready: keys(app.get("/x").public()),
  ReadyAuthenticated: keys(app.get("/x").auth(user).allow("a")),
  OptionalUser: keys(user),
  RequiredUser: keys(user.required()),
  ResourceSpec: keys(httpmod.resource("t")),
  ResourceSpecChained: keys(httpmod.resource("t").idFromParam("x").mustExist()),
  Markup: keys(markup).concat(methods(markup)),
  ResourcesModule: keys(require("resources")),
  AuditModule: keys(require("audit")),
  MountableModule: keys(require("idp")),
  Mountable: keys(require("idp").handler()),
  AssetsModule: keys(require("fs:assets")),
};
app.get("/out").public().handle((ctx, res) => {
  out.PlannedContext = keys(ctx).concat(methods(ctx));
  out.Request = keys(ctx.request);
  out.Session = ctx.request.session ? keys(ctx.request.session) : null;
  out.Response = methods(res);
  res.json(out);
});`;

describe("httpmod.d.ts against httpmod.js", () => {
  it("declares exactly the members each value offers at run time, stage by stage", async () => {
    const host = await scriptHost(ENUMERATE, {
      mountables: { idp: { handler: () => new Response("idp") } },
      services: storeServices(undefined),
      assets: { assets: { tree: memoryFileTree({ "a/x.txt": "x" }), root: "/a" } },
    });
    const runtime = (await call(host, "GET", "/out")).json as Record<string, string[]>;
    await host.close();
    const declared = declaredMembers(httpmodDeclarations());
    const sorted = (names: string[]) => [...new Set(names)].sort();
    // Both Ready stages (public, authenticated) are one object shape; so are chained resource specs.
    expect(sorted(runtime.ReadyAuthenticated!)).toEqual(sorted(runtime.Ready!));
    expect(sorted(runtime.ResourceSpecChained!)).toEqual(sorted(runtime.ResourceSpec!));
    for (const name of Object.keys(DECLARED_VALUES)) {
      expect(declared[name], `interface ${name} in httpmod.d.ts`).toBeDefined();
      expect(declared[name], `interface ${name} (${DECLARED_VALUES[name as keyof typeof DECLARED_VALUES]})`).toEqual(sorted(runtime[name]!));
    }
  });

  it("declares every assets module the host installs, and fs: names by pattern", () => {
    const text = httpmodDeclarations({ assets: ["ui-assets", "fs:web"] });
    expect(text).toContain('declare module "ui-assets" {');
    expect(text).toContain('declare function require(name: "ui-assets"): Httpmod.AssetsModule;');
    expect(text).toContain('declare module "fs:*" {');
    expect(text).not.toContain('declare module "fs:web"');
  });
});

/** `tsc` on `files` with the declarations: its errors by file (path relative to the root). */
async function typeCheck(files: string[]): Promise<Map<string, string[]>> {
  const dir = await mkdtemp(join(tmpdir(), "httpmod-types-"));
  try {
    await writeFile(join(dir, "httpmod.d.ts"), httpmodDeclarations({ assets: ["assets"] }));
    // The jsconfig docs/routes.md shows, plus the files to check.
    const config = {
      compilerOptions: { checkJs: true, strict: true, noImplicitAny: false, target: "ES2023", lib: ["ES2023"], types: [] },
      files: [join(dir, "httpmod.d.ts"), ...files],
    };
    await writeFile(join(dir, "jsconfig.json"), JSON.stringify(config));
    const { stdout, stderr } = await runToEnd(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(dir, "jsconfig.json")], {
      cwd: ROOT,
    });
    const errors = new Map<string, string[]>();
    let last: string[] | undefined;
    for (const line of `${stdout}${stderr}`.split("\n")) {
      const m = /^(.+?)\(\d+,\d+\): error (TS\d+: .*)$/.exec(line);
      if (m) {
        const file = m[1]!.startsWith("/") ? m[1]!.slice(ROOT.length) : m[1]!;
        errors.set(file, [...(errors.get(file) ?? []), m[2]!]);
        last = errors.get(file);
      } else if (line.startsWith(" ") && last) last[last.length - 1] += ` ${line.trim()}`;
      else if (line.trim() !== "") errors.set("(tsc)", [...(errors.get("(tsc)") ?? []), line]);
    }
    return errors;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("type-checking scripts with httpmod.d.ts", () => {
  let errors: Map<string, string[]>;
  let bad: string[];
  let examples: string[];
  beforeAll(async () => {
    examples = (await readdir(join(ROOT, "examples/routes"), { recursive: true })).filter((f) => f.endsWith(".js")).map((f) => `examples/routes/${f}`);
    bad = (await readdir(TYPES)).filter((f) => f.startsWith("bad-"));
    errors = await typeCheck(
      [...examples, "apps/routes/script/testdata/types/good.js", ...bad.map((f) => `apps/routes/script/testdata/types/${f}`)].map((f) => join(ROOT, f)),
    );
  }, 60_000);
  afterAll(() => {});

  it("finds nothing wrong in examples/routes or testdata/types/good.js", () => {
    expect(examples.length).toBeGreaterThan(3);
    for (const file of [...examples, "apps/routes/script/testdata/types/good.js", "(tsc)"]) expect(errors.get(file), file).toBeUndefined();
  });

  it("refuses each mistake in testdata/types/bad-*.js with the error it names", async () => {
    expect(bad.length).toBeGreaterThan(10);
    for (const file of bad) {
      const expected = /^\/\/ expect: (.*)$/m.exec(await readFile(join(TYPES, file), "utf8"))![1]!;
      const found = errors.get(`apps/routes/script/testdata/types/${file}`) ?? [];
      expect(found.some((e) => e.includes(expected)), `${file}: ${JSON.stringify(found)} should include ${expected}`).toBe(true);
    }
  });
});

describe("routes types", () => {
  it("writes the declarations (./httpmod.d.ts or --out), with the --assets modules", async () => {
    const dir = await mkdtemp(join(tmpdir(), "routes-types-"));
    const out = join(dir, "types", "httpmod.d.ts");
    const run = await runToEnd(process.execPath, ["lib/adapters/node/run.mjs", "apps/routes/entries/node.ts", "types", "--out", out, "--assets", `ui=${dir}`], {
      cwd: ROOT,
    });
    expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining("wrote") });
    expect(await readFile(out, "utf8")).toBe(httpmodDeclarations({ assets: ["ui"] }));
    const here = await runToEnd(process.execPath, [join(ROOT, "lib/adapters/node/run.mjs"), join(ROOT, "apps/routes/entries/node.ts"), "types"], { cwd: dir });
    expect(here.code).toBe(0);
    expect(await readFile(join(dir, "httpmod.d.ts"), "utf8")).toBe(httpmodDeclarations());
    await rm(dir, { recursive: true, force: true });
  }, 60_000);
});
