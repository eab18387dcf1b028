/**
 * Assets modules as the original names and roots them (`require("fs:assets")`, `"/app/public"`),
 * and single-page apps served from one (`app.spaFromAssetsModule`): what is served, what falls
 * back to the index, what stays 404, and what a script or a request cannot reach.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFileTree } from "#lib/adapters/node/files";
import { memoryFileTree } from "#lib/files";
import { runToEnd } from "#test/runtimes/processes.ts";
import { call, scriptHost } from "../testing.ts";
import type { RouteHost } from "./host.ts";

const PRELUDE = `const httpmod = require("httpmod"); const app = httpmod.app();`;

/** A module's files, with a file beside its root that must never be served. */
const TREE = {
  "bundle/app/public/index.html": "<p>spa index</p>",
  "bundle/app/public/main.js": "console.log('main')",
  "bundle/app/public/docs/guide.html": "<p>guide</p>",
  "bundle/app/public/empty/.keep": "",
  "bundle/app/public/shell.html": "<p>shell</p>",
  "bundle/app/secret.txt": "outside the root",
  "outside.txt": "outside the module",
};
const assets = () => ({ assets: { assets: { tree: memoryFileTree(TREE), root: "/bundle" } } });

describe("assets module names", () => {
  it("installs a plain name also as fs:<name>, the original's spelling", async () => {
    const host = await scriptHost(
      `${PRELUDE} app.staticFromAssetsModule("/a", require("fs:assets"), "/app/public").staticFromAssetsModule("/b", require("assets"), "app/public");
       app.get("/same").public().handle(() => String(require("fs:assets") !== undefined));`,
      assets(),
    );
    expect((await call(host, "GET", "/a/main.js")).text).toBe("console.log('main')");
    expect((await call(host, "GET", "/b/main.js")).text).toBe("console.log('main')");
    await host.close();
  });

  it("takes a name with a scheme-like prefix as it is, and an explicit fs: name wins over an alias", async () => {
    const host = await scriptHost(`${PRELUDE} app.staticFromAssetsModule("/u", require("fs:ui"), "/").staticFromAssetsModule("/x", require("fs:x"), "/");`, {
      assets: {
        "fs:ui": { tree: memoryFileTree({ "ui/a.txt": "ui" }), root: "/ui" },
        x: { tree: memoryFileTree({ "x/a.txt": "alias" }), root: "/x" },
        "fs:x": { tree: memoryFileTree({ "fx/a.txt": "explicit" }), root: "/fx" },
      },
    });
    expect((await call(host, "GET", "/u/a.txt")).text).toBe("ui");
    expect((await call(host, "GET", "/x/a.txt")).text).toBe("explicit");
    await host.close();
  });

  it.each(["fs:../x", "fs:assets/../", "fs:assets/", "fs:", "fs:fs:assets", "fs:%61ssets", "fs:%2e%2e", "assets:fs", "./fs:assets", "/fs:assets"])(
    "finds no module named %j",
    async (name) => {
      await expect(scriptHost(`${PRELUDE} app.staticFromAssetsModule("/a", require(${JSON.stringify(name)}), "/");`, assets())).rejects.toThrow(
        /Cannot find module|not found/,
      );
    },
  );

  it("reads a module name only up to a NUL (QuickJS's strings cross as C strings): the same module, nothing more", async () => {
    const host = await scriptHost(
      `${PRELUDE} app.get("/same").public().handle(() => String(require("fs:assets\\0/../../x") === require("fs:assets")));`,
      assets(),
    );
    expect((await call(host, "GET", "/same")).text).toBe("true");
    await host.close();
  });
});

describe("assets module names on the command line (--assets, ROUTES_ASSETS)", () => {
  const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
  const out = join(tmpdir(), `routes-assets-${process.pid}.d.ts`);
  afterAll(() => rm(out, { force: true }));
  const withAssets = (setting: string) =>
    runToEnd(process.execPath, ["lib/adapters/node/run.mjs", "apps/routes/entries/node.ts", "types", "--out", out, "--assets", setting], { cwd: ROOT });

  it("refuses a name that is not a name, or one of the host's own modules: one line, exit 2", async () => {
    const names = ["fs:../x", "fs:assets/..", "fs:assets/", "fs:", ":assets", "fs:fs:assets", "fs:%2e%2e", "httpmod:host", "httpmod", "idp", "a\\b"];
    const runs = await Promise.all(names.map((name) => withAssets(`${name}=test/contract/fixtures/routes-assets`)));
    runs.forEach((run, i) => {
      expect(run.code, names[i]).toBe(2);
      expect(run.stderr, names[i]).toContain(`${JSON.stringify(names[i])} cannot name a module`);
    });
  }, 60_000);

  it("takes fs:NAME=DIR and NAME=DIR", async () => {
    const run = await withAssets("fs:web=test/contract/fixtures/routes-assets,ui_2=test/contract/fixtures/routes-assets");
    expect(run, run.stderr).toMatchObject({ code: 0 });
  }, 60_000);
});

describe("assets module roots", () => {
  it.each([["/app/public"], ["app/public"], ["/app//public/"], ["./app/public"]])("serves the root %j inside the module", async (root) => {
    const host = await scriptHost(`${PRELUDE} app.staticFromAssetsModule("/ui", require("fs:assets"), ${JSON.stringify(root)});`, assets());
    expect((await call(host, "GET", "/ui/main.js")).text).toBe("console.log('main')");
    expect((await call(host, "GET", "/ui/../secret.txt")).status).toBe(404);
    await host.close();
  });

  it('serves the module\'s root for "/" and ""', async () => {
    for (const root of ["/", ""]) {
      const host = await scriptHost(`${PRELUDE} app.staticFromAssetsModule("/m", require("fs:assets"), ${JSON.stringify(root)});`, assets());
      expect((await call(host, "GET", "/m/app/secret.txt")).text).toBe("outside the root");
      expect((await call(host, "GET", "/m/../outside.txt")).status).toBe(404);
      await host.close();
    }
  });

  it.each(["/../x", "/..", "../x", "/app/../..", "%2e%2e", "/%2e%2e/x", "/%252e%252e/x", "/app%2f..%2f..", "..\\x", "\\x", "C:/x", "/app\0/public"])(
    "refuses the root %j, naming the assets module and the script's line",
    async (root) => {
      const load = scriptHost(`${PRELUDE}\napp.staticFromAssetsModule("/ui", require("fs:assets"), ${JSON.stringify(root)});`, assets());
      await expect(load).rejects.toThrow(`root ${JSON.stringify(root)} is not a directory inside the assets module "fs:assets"`);
      await expect(load).rejects.toThrow("(at /app.js:2:");
    },
  );

  it.each([
    "/ui/../secret.txt",
    "/ui/%2e%2e/secret.txt",
    "/ui/%2E%2E%2Fsecret.txt",
    "/ui/..%2fsecret.txt",
    "/ui/..%5csecret.txt",
    "/ui/%252e%252e/secret.txt",
    "/ui/docs/..%2f..%2fsecret.txt",
    "/ui/main.js%00.txt",
    "/ui//../../outside.txt",
    "/ui/%2f..%2f..%2foutside.txt",
  ])("never serves a file above a rooted root: %s", async (path) => {
    const host = await scriptHost(`${PRELUDE} app.staticFromAssetsModule("/ui", require("fs:assets"), "/app/public");`, assets());
    const res = await host.fetch(new Request(new URL(`http://host.test${path}`)));
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("outside the");
    await host.close();
  });
});

describe("app.spaFromAssetsModule", () => {
  let host: RouteHost;
  beforeAll(async () => {
    host = await scriptHost(
      `${PRELUDE}
       app.spaFromAssetsModule("/", require("fs:assets"), "/app/public");
       app.get("/api/hello").public().handle(() => "api hello");`,
      assets(),
    );
  });
  afterAll(() => host.close());

  it.each([
    ["/main.js", "console.log('main')", "text/javascript; charset=utf-8", null],
    ["/docs/guide.html", "<p>guide</p>", "text/html; charset=utf-8", null],
    ["/", "<p>spa index</p>", "text/html; charset=utf-8", null],
    ["/notes/42", "<p>spa index</p>", "text/html; charset=utf-8", "no-cache"],
    ["/deep/client/route?tab=2", "<p>spa index</p>", "text/html; charset=utf-8", "no-cache"],
    ["/empty/", "<p>spa index</p>", "text/html; charset=utf-8", "no-cache"],
  ])("GET %s: files as they are, the index for every other path", async (path, body, type, cache) => {
    const res = await call(host, "GET", path);
    expect(res.status).toBe(200);
    expect(res.text).toBe(body);
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.headers.get("cache-control")).toBe(cache);
  });

  it("answers HEAD with the index's headers and no body", async () => {
    const res = await host.fetch(new Request("http://host.test/some/route", { method: "HEAD" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String("<p>spa index</p>".length));
    expect(await res.text()).toBe("");
  });

  it("leaves the excluded prefix (default /api) to the routes: a route answers, anything else is 404", async () => {
    expect((await call(host, "GET", "/api/hello")).text).toBe("api hello");
    expect((await call(host, "GET", "/api/nothing")).status).toBe(404);
    expect((await call(host, "GET", "/api")).status).toBe(404);
    expect((await call(host, "GET", "/apis")).text).toBe("<p>spa index</p>");
  });

  it("refuses other methods (405, Allow: GET, HEAD)", async () => {
    const res = await call(host, "POST", "/notes/42", { body: "x" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
  });

  it.each(["/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%252e%252e/secret.txt", "/docs/..%2f..%2fsecret.txt", "/main.js%00"])(
    "never serves a file above its root, nor the index for an escaping path: %s",
    async (path) => {
      const res = await host.fetch(new Request(new URL(`http://host.test${path}`)));
      expect(await res.text()).not.toContain("outside the");
      expect([404, 200]).toContain(res.status);
      if (path.includes("%2f") || path.includes("%252e") || path.includes("%00")) expect(res.status).toBe(404);
    },
  );

  it("takes another index and other exclusions, under a prefix", async () => {
    const other = await scriptHost(
      `${PRELUDE} app.spaFromAssetsModule("/app", require("assets"), "app/public", { index: "/shell.html", excludePrefixes: ["/app/raw", "/app/%64ocs"] });`,
      assets(),
    );
    expect((await call(other, "GET", "/app/x/y")).text).toBe("<p>shell</p>");
    expect((await call(other, "GET", "/app/main.js")).text).toBe("console.log('main')");
    expect((await call(other, "GET", "/app/raw/x")).status).toBe(404);
    expect((await call(other, "GET", "/app/docs/guide.html")).status).toBe(404);
    expect((await call(other, "GET", "/app/api/x")).text).toBe("<p>shell</p>");
    expect((await call(other, "GET", "/elsewhere")).status).toBe(404);
    expect(other.routes()[0]).toMatchObject({ kind: "static", pattern: "/app", spaIndex: "shell.html", excludePrefixes: ["/app/raw", "/app/docs"] });
    await other.close();
  });

  it.each([
    [`{ index: "../secret.txt" }`, `index "../secret.txt" is not a file inside the assets module "assets"`],
    [`{ index: "/" }`, "options.index must name a file"],
    [`{ index: 3 }`, "options.index must be a string"],
    [`{ excludePrefixes: "/api" }`, "excludePrefixes must be a list of path prefixes"],
    [`{ excludePrefixes: ["api"] }`, 'excluded prefix "api" must start with "/"'],
    [`"index.html"`, "options must be an object"],
  ])("refuses the options %s at registration", async (options, message) => {
    await expect(scriptHost(`${PRELUDE} app.spaFromAssetsModule("/", require("assets"), "/app/public", ${options});`, assets())).rejects.toThrow(message);
  });
});

describe("what a single-page app or an assets root never serves", () => {
  it("no dot-entry (.env, .git/), as `routes bundle` never bundles one: a static mount 404, a single-page app its index", async () => {
    const tree = { "m/public/index.html": "<p>spa index</p>", "m/public/.env": "SECRET=1", "m/public/.git/config": "[core]", "m/public/a/.hidden": "h" };
    const host = await scriptHost(`${PRELUDE} app.spaFromAssetsModule("/", require("assets"), "/public");`, {
      assets: { assets: { tree: memoryFileTree(tree), root: "/m" } },
    });
    const staticOnly = await scriptHost(`${PRELUDE} app.staticFromAssetsModule("/raw", require("assets"), "/public");`, {
      assets: { assets: { tree: memoryFileTree(tree), root: "/m" } },
    });
    for (const path of ["/.env", "/%2eenv", "/%252eenv", "/.git/config", "/.git/", "/a/.hidden", "/a/%2Ehidden"]) {
      const spa = await host.fetch(new Request(new URL(`http://host.test${path}`)));
      expect(await spa.text(), path).not.toMatch(/SECRET|core|^h$/);
      const raw = await staticOnly.fetch(new Request(new URL(`http://host.test/raw${path}`)));
      expect(raw.status, path).toBe(404);
    }
    const dotIndex = await scriptHost(`${PRELUDE} app.spaFromAssetsModule("/", require("assets"), "/public", { index: ".env" });`, {
      assets: { assets: { tree: memoryFileTree(tree), root: "/m" } },
    });
    expect((await call(dotIndex, "GET", "/anything")).status).toBe(404);
    await dotIndex.close();
    await host.close();
    await staticOnly.close();
  });

  describe("a root reached through a symlink that leads out of the module (node file system)", () => {
    let dir: string;
    let host: RouteHost;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "routes-assets-link-"));
      await mkdir(join(dir, "module/public"), { recursive: true });
      await mkdir(join(dir, "outside"));
      await writeFile(join(dir, "module/public/index.html"), "<p>spa index</p>");
      await writeFile(join(dir, "module/inside.txt"), "inside the module");
      await writeFile(join(dir, "outside/secret.txt"), "outside the module");
      await symlink("../../outside", join(dir, "module/public/out"));
      await symlink("..", join(dir, "module/public/up"));
      host = await scriptHost(
        `${PRELUDE} app.staticFromAssetsModule("/out", require("assets"), "/public/out").spaFromAssetsModule("/spa", require("assets"), "public/out", { index: "secret.txt" })
           .staticFromAssetsModule("/up", require("assets"), "/public/up");`,
        { assets: { assets: { tree: nodeFileTree(), root: join(dir, "module") } } },
      );
    });
    afterAll(async () => {
      await host?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it.each(["/out/secret.txt", "/out/", "/spa/secret.txt", "/spa/anything"])("serves nothing outside the module: %s", async (path) => {
      const res = await call(host, "GET", path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("outside the module");
    });

    it("serves a root whose symlink stays inside the module", async () => {
      expect((await call(host, "GET", "/up/inside.txt")).text).toBe("inside the module");
    });
  });

  it("leaves the host's own routes (/auth/login, /auth/logout) to the host under an app at /", async () => {
    const host = await scriptHost(`${PRELUDE} app.spaFromAssetsModule("/", require("fs:assets"), "/app/public");`, assets());
    host.registerPlanned({ method: "GET", pattern: "/auth/login", public: true }, () => new Response("host login"));
    host.registerPlanned({ method: "POST", pattern: "/auth/logout", public: true }, () => new Response("host logout"));
    expect((await call(host, "GET", "/auth/login")).text).toBe("host login");
    expect((await call(host, "POST", "/auth/logout")).text).toBe("host logout");
    expect((await call(host, "GET", "/auth/other")).text).toBe("<p>spa index</p>");
    await host.close();
  });
});
