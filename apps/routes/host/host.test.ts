/** The host: result rules, the request object, matching, mounts, failures in handlers (its pipeline: host-pipeline.test.ts). */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFileTree } from "#lib/adapters/node/files";
import { memoryFileTree } from "#lib/files";
import type { RouteHost } from "./host.ts";
import { call, scriptHost } from "../testing.ts";

const PRELUDE = `const httpmod = require("httpmod"); const app = httpmod.app(); const user = httpmod.user().required();`;

describe("handler results (docs/routes.md, Result rules)", () => {
  let host: RouteHost;
  beforeAll(async () => {
    host = await scriptHost(
      `${PRELUDE}
      app.get("/text").public().handle(() => "plain words");
      app.get("/html").public().handle(() => "  <p>markup</p>");
      app.get("/object").public().handle(() => ({ title: "rendered" }));
      app.get("/null").public().handle(() => null);
      app.get("/undefined").public().handle(() => {});
      app.get("/json").public().handle((ctx, res) => res.status(201).json({ ok: true }));
      app.get("/send-object").public().handle((ctx, res) => res.send({ a: [1] }));
      app.get("/send-bytes").public().handle((ctx, res) => res.send(new Uint8Array([0, 1, 255])));
      app.get("/set").public().handle((ctx, res) => { res.set("X-Thing", "1").type("text/csv").send("a,b"); });
      app.get("/redirect").public().handle((ctx, res) => res.redirect("/elsewhere"));
      app.get("/redirect-301").public().handle((ctx, res) => res.redirect(301, "/moved"));
      app.get("/end").public().handle((ctx, res) => res.status(204).end());
      app.get("/explicit-wins").public().handle((ctx, res) => { res.send("sent"); return "ignored"; });
      app.get("/twice").public().handle((ctx, res) => { res.send("one"); res.send("two"); });
      app.get("/async").public().handle(async (ctx) => { await Promise.resolve(); return "awaited " + ctx.params.x; });
      app.get("/html-object").public().handle((ctx, res) => res.html({ title: "t" }));
      app.get("/crlf").public().handle((ctx, res) => res.set("X-Bad", "a\\r\\nSet-Cookie: evil=1").send("x"));
      app.get("/nul").public().handle((ctx, res) => res.set("X-Bad", "a\\u0000b").send("x"));
      app.get("/bad-name").public().handle((ctx, res) => res.set("X Bad", "a").send("x"));
      app.get("/bad-status").public().handle((ctx, res) => res.status(99).send("x"));
      app.get("/throw").public().handle(() => { throw new TypeError("secret detail"); });
      `,
      { renderer: (value) => `<h1>${(value as { title: string }).title}</h1>` },
    );
  });
  afterAll(() => host.close());

  it.each([
    ["/text", 200, "text/plain; charset=utf-8", "plain words"],
    ["/html", 200, "text/html; charset=utf-8", "  <p>markup</p>"],
    ["/object", 200, "text/html; charset=utf-8", "<h1>rendered</h1>"],
    ["/null", 200, null, ""],
    ["/undefined", 200, null, ""],
    ["/json", 201, "application/json", '{"ok":true}'],
    ["/send-object", 200, "application/json", '{"a":[1]}'],
    ["/set", 200, "text/csv", "a,b"],
    ["/redirect", 302, null, ""],
    ["/redirect-301", 301, null, ""],
    ["/end", 204, null, ""],
    ["/explicit-wins", 200, "text/plain; charset=utf-8", "sent"],
    ["/async", 200, "text/plain; charset=utf-8", "awaited undefined"],
    ["/html-object", 200, "text/html; charset=utf-8", "<h1>t</h1>"],
  ])("GET %s -> %i %s", async (path, status, type, body) => {
    const res = await call(host, "GET", path);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.text).toBe(body);
  });

  it("sends bytes, headers and redirect targets as set", async () => {
    const bytes = await host.fetch(new Request("http://host.test/send-bytes"));
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(new Uint8Array([0, 1, 255]));
    expect(bytes.headers.get("content-type")).toBe("application/octet-stream");
    expect((await call(host, "GET", "/set")).headers.get("x-thing")).toBe("1");
    expect((await call(host, "GET", "/redirect-301")).headers.get("location")).toBe("/moved");
  });

  it.each(["/crlf", "/nul", "/bad-name", "/bad-status", "/twice", "/throw"])(
    "GET %s is a 500 that shows nothing of the handler outside dev mode",
    async (path) => {
      const res = await call(host, "GET", path);
      expect(res.status).toBe(500);
      expect(res.json).toEqual({ error: { code: "HANDLER_FAILED", message: "internal error" } });
      expect(res.headers.get("x-bad")).toBeNull();
      expect(res.headers.get("set-cookie") ?? "").not.toContain("evil");
    },
  );

  it("without a renderer, res.html(object) is a 500", async () => {
    const bare = await scriptHost(`${PRELUDE} app.get("/").public().handle(() => ({ a: 1 }));`, { dev: true });
    expect((await call(bare, "GET", "/")).json).toEqual({ error: { code: "HANDLER_FAILED", message: expect.stringContaining("needs the host's renderer") } });
    await bare.close();
  });
});

describe("the request object", () => {
  let host: RouteHost;
  beforeAll(async () => {
    host = await scriptHost(`${PRELUDE}
      app.all("/echo/:id").public().handle((ctx, res) => {
        const r = ctx.request;
        res.json({ method: r.method, path: r.path, url: r.url, query: r.query, params: ctx.params, header: r.headers["x-custom"], upper: r.headers["X-Custom"] === undefined,
          cookies: r.cookies, ip: r.ip, body: ctx.body, rawBody: r.rawBody, session: r.session });
      });`);
  });
  afterAll(() => host.close());

  it("has lower-case headers, repeated query keys as lists, cookies, the ip and a session", async () => {
    const res = await call(host, "GET", "/echo/a%20b?x=1&x=2&y=3", { headers: { "X-Custom": "v", cookie: "a=1; b=two" } });
    expect(res.json).toMatchObject({
      method: "GET",
      path: "/echo/a%20b",
      url: "http://host.test/echo/a%20b?x=1&x=2&y=3",
      query: { x: ["1", "2"], y: "3" },
      params: { id: "a b" },
      header: "v",
      upper: true,
      cookies: { a: "1", b: "two" },
      ip: "127.0.0.9",
      body: null,
      rawBody: "",
      session: { id: expect.any(String), isNew: true, cookieName: "routes_session" },
    });
  });

  it("keeps the session when its signed cookie comes back, and makes a new one for a forged cookie", async () => {
    const first = await call(host, "GET", "/echo/1");
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    expect(cookie).toMatch(/^routes_session=/);
    const again = await call(host, "GET", "/echo/1", { headers: { cookie } });
    expect(again.json.session).toEqual({ id: first.json.session.id, isNew: false, cookieName: "routes_session" });
    expect(again.headers.get("set-cookie")).toBeNull();
    const forged = await call(host, "GET", "/echo/1", { headers: { cookie: `routes_session=${first.json.session.id}.AAAA` } });
    expect(forged.json.session.isNew).toBe(true);
    expect(forged.json.session.id).not.toBe(first.json.session.id);
  });

  it("parses JSON and form bodies, keeps other bodies as strings, and refuses bad JSON with 400", async () => {
    expect((await call(host, "POST", "/echo/1", { body: '{"a":[1,2]}', headers: { "content-type": "application/json" } })).json).toMatchObject({
      body: { a: [1, 2] },
      rawBody: '{"a":[1,2]}',
    });
    expect((await call(host, "POST", "/echo/1", { body: "a=1&b=2&a=3", headers: { "content-type": "application/x-www-form-urlencoded" } })).json.body).toEqual({
      a: ["1", "3"],
      b: "2",
    });
    expect((await call(host, "PUT", "/echo/1", { body: "just text", headers: { "content-type": "text/plain" } })).json.body).toBe("just text");
    const bad = await call(host, "POST", "/echo/1", { body: "{nope", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("INVALID_JSON");
  });
});

describe("matching", () => {
  let host: RouteHost;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "routes-static-"));
    await mkdir(join(dir, "site/sub"), { recursive: true });
    await writeFile(join(dir, "site/index.html"), "<h1>index</h1>");
    await writeFile(join(dir, "site/a.css"), "body{}");
    await writeFile(join(dir, "site/sub/index.html"), "sub index");
    await writeFile(join(dir, "secret.txt"), "outside the static directory");
    await symlink(join(dir, "secret.txt"), join(dir, "site/link.txt"));
    host = await scriptHost(
      `${PRELUDE}
      app.get("/static-route").public().handle(() => "route, not the static mount");
      app.static("/static", "site");
      app.mount("/api", require("echo").handler(), { stripPrefix: true, excludePrefixes: ["/api/local"] });
      app.mount("/raw", require("echo").handler());
      app.get("/api/local/x").public().handle(() => "local route");
      app.get("/api/local").public().handle(() => "local root");
      app.get("/items/:id").public().handle((ctx) => "item " + ctx.params.id);
      app.get("/items/special").public().handle(() => "never: registered after :id");
      app.get("/files/*").public().handle(() => "files");
      app.route("PURGE", "/cache").public().handle(() => "purged");
      `,
      {
        files: { tree: nodeFileTree(), root: dir },
        mountables: { echo: { handler: (req) => new Response(`mounted ${req.method} ${new URL(req.url).pathname}${new URL(req.url).search}`) } },
      },
    );
  });
  afterAll(async () => {
    await host.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["GET", "/items/7", 200, "item 7"],
    ["GET", "/items/special", 200, "item special"],
    ["GET", "/items/7/", 200, "item 7"],
    ["GET", "/files", 200, "files"],
    ["GET", "/files/a/b/c", 200, "files"],
    ["PURGE", "/cache", 200, "purged"],
    ["GET", "/api/users?x=1", 200, "mounted GET /users?x=1"],
    ["POST", "/api", 200, "mounted POST /"],
    ["GET", "/api/local/x", 200, "local route"],
    ["GET", "/api/local", 200, "local root"],
    ["GET", "/api/localx", 200, "mounted GET /localx"],
    ["GET", "/raw/a", 200, "mounted GET /raw/a"],
    ["GET", "/rawfoo", 404, undefined],
    ["GET", "/static/a.css", 200, "body{}"],
    ["GET", "/static/", 200, "<h1>index</h1>"],
    ["GET", "/static/sub/", 200, "sub index"],
    ["GET", "/staticfoo", 404, undefined],
  ])("%s %s -> %i", async (method, path, status, body) => {
    const res = await call(host, method, path);
    expect(res.status).toBe(status);
    if (body !== undefined) expect(res.text).toBe(body);
  });

  it("answers HEAD from GET without a body, and 405 with Allow for a known path", async () => {
    const head = await host.fetch(new Request("http://host.test/items/3", { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const res = await call(host, "DELETE", "/items/3");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect((await call(host, "GET", "/nothing")).status).toBe(404);
  });

  it("redirects a directory without its slash to the slash", async () => {
    const res = await call(host, "GET", "/static/sub");
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe("/static/sub/");
  });

  it.each([
    "/static/../secret.txt",
    "/static/%2e%2e/secret.txt",
    "/static/%2E%2E%2Fsecret.txt",
    "/static/..%2fsecret.txt",
    "/static/..%5csecret.txt",
    "/static/%252e%252e/secret.txt",
    "/static/sub/..%2f..%2fsecret.txt",
    "/static/a.css%00.txt",
    "/static/link.txt",
    "/static//etc/passwd",
  ])("never serves a file outside the directory: %s", async (path) => {
    const res = await host.fetch(new Request(new URL(`http://host.test${path}`)));
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("outside");
  });

  it("refuses a static directory outside the host's root at registration", async () => {
    for (const directory of ["/etc", "../", "site/../.."]) {
      await expect(scriptHost(`${PRELUDE} app.static("/s", ${JSON.stringify(directory)});`, { files: { tree: nodeFileTree(), root: dir } })).rejects.toThrow(
        "must be a relative path inside the host's static root",
      );
    }
  });

  it("serves an assets module from another file tree", async () => {
    const assets = await scriptHost(`${PRELUDE} app.staticFromAssetsModule("/ui", require("ui-assets"), "dist");`, {
      assets: { "ui-assets": { tree: memoryFileTree({ "bundle/dist/app.js": "console.log(1)", "bundle/src/x.ts": "no" }), root: "/bundle" } },
    });
    const res = await call(assets, "GET", "/ui/app.js");
    expect(res.text).toBe("console.log(1)");
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await call(assets, "GET", "/ui/../src/x.ts")).status).toBe(404);
    await assets.close();
  });
});

describe("failures in handlers", () => {
  it("interrupts a handler past its time limit, shows the message in dev mode only, and keeps serving", async () => {
    const host = await scriptHost(`${PRELUDE} app.get("/spin").public().handle(() => { for (;;) {} }); app.get("/ok").public().handle(() => "ok");`, {
      dev: true,
      limits: { cpuMs: 100 },
    });
    const res = await call(host, "GET", "/spin");
    expect(res.status).toBe(500);
    expect(res.json.error.message).toBe("the handler ran past the time limit (100 ms CPU) and was interrupted");
    expect((await call(host, "GET", "/ok")).text).toBe("ok");
    await host.close();
  });

  it("replaces a sandbox that ran out of memory, with the script loaded again", async () => {
    const host = await scriptHost(
      `${PRELUDE} let kept = []; app.get("/grow").public().handle(() => { for (;;) kept.push(new Array(100000).fill(1)); });
       let n = 0; app.get("/count").public().handle(() => String(++n));`,
      { dev: true, limits: { memMb: 16 } },
    );
    expect((await call(host, "GET", "/count")).text).toBe("1");
    const res = await call(host, "GET", "/grow");
    expect(res.status).toBe(500);
    expect(res.json.error.message).toContain("ran out of memory");
    // A fresh sandbox: the counter starts again.
    expect((await call(host, "GET", "/count")).text).toBe("1");
    await host.close();
  });

  it("in dev mode, a miss while the last edit failed to load says so and points at /_routes", async () => {
    const host = await scriptHost(`${PRELUDE} app.get("/v").public().handle(() => "v1");`, { dev: true });
    const typo = `${PRELUDE} app.get("/hello/:name").pubilc().handle(() => "hi");`;
    await expect(host.loadScript({ entry: "/app.js", files: { "/app.js": typo } })).rejects.toThrow("pubilc");
    const miss = await call(host, "GET", "/hello/x");
    expect(miss.status).toBe(404);
    expect(miss.json.error.message).toMatch(
      /^no route for GET \/hello\/x \(the script's last edit did not load, so the previous routes are served: .*app\.get\("\/hello\/:name"\)\.pubilc is not a function.*did you mean \.public\(\)\?.*; see \/_routes\)$/,
    );
    const page = await host.fetch(new Request("http://127.0.0.1/hello/x", { headers: { accept: "text/html" } }));
    const text = await page.text();
    expect(text).toContain("the script&#39;s last edit did not load");
    expect(text).toContain('<a href="/_routes">/_routes</a>');
    await host.close();
    const quiet = await scriptHost(`${PRELUDE} app.get("/v").public().handle(() => "v1");`);
    await expect(quiet.loadScript({ entry: "/app.js", files: { "/app.js": typo } })).rejects.toThrow("pubilc");
    expect((await call(quiet, "GET", "/hello/x")).json.error.message).toBe("no route for GET /hello/x");
    await quiet.close();
  });

  it("keeps the previous routes when a reload fails, and reports the error", async () => {
    const host = await scriptHost(`${PRELUDE} app.get("/v").public().handle(() => "v1");`);
    await expect(host.loadScript({ entry: "/app.js", files: { "/app.js": `${PRELUDE} app.get("/v").public().handle(() => "v2"); syntax error here` } })).rejects
      .toThrow("SyntaxError");
    expect(host.loadError).toContain("SyntaxError");
    expect((await call(host, "GET", "/v")).text).toBe("v1");
    await host.loadScript({ entry: "/app.js", files: { "/app.js": `${PRELUDE} app.get("/v").public().handle(() => "v3");` } });
    expect(host.loadError).toBeUndefined();
    expect((await call(host, "GET", "/v")).text).toBe("v3");
    await host.close();
  });
});
