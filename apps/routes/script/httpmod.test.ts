/** The script API as a script sees it: the builder, what it refuses, and what a script cannot reach. */
import { describe, expect, it } from "vitest";
import { loadQuickJS } from "#lib/sandbox";
import { call, scriptHost } from "../testing.ts";
import { loadScriptSandbox } from "./script-sandbox.ts";
import { compactAnswerResponse, isCompactAnswer } from "./script-wire.ts";

/** Runs `body` in a script; `check(out)` records a line; GET /out answers the lines. */
async function lines(body: string, options: Parameters<typeof scriptHost>[1] = {}): Promise<string[]> {
  const host = await scriptHost(
    `const httpmod = require("httpmod"); const app = httpmod.app(); const out = [];
     const attempt = (f) => { try { const r = f(); out.push("ok " + String(r)); } catch (e) { out.push(e.name + ": " + e.message); } };
     ${body}
     app.get("/out").public().handle((ctx, res) => res.json(out));`,
    options,
  );
  const res = await call(host, "GET", "/out");
  await host.close();
  return res.json;
}

describe("httpmod in the sandbox", () => {
  it("is reached only through require('httpmod'), and is frozen", async () => {
    expect(
      await lines(`
        attempt(() => typeof globalThis.httpmod);
        attempt(() => Object.isFrozen(httpmod) && Object.isFrozen(app));
        attempt(() => { "use strict"; httpmod.app = 1; });
        attempt(() => require("httpmod") === httpmod);`),
    ).toEqual(["ok undefined", "ok true", "TypeError: 'app' is read-only", "ok true"]);
  });

  it("has staged, immutable builders: .handle only on the Ready stage", async () => {
    expect(
      await lines(`
        const started = app.get("/a");
        attempt(() => "handle" in started);
        attempt(() => started.handle(() => 1));
        attempt(() => app.post("/b").auth(httpmod.user().required()).csrf().handle(() => 1));
        attempt(() => typeof app.get("/a").auth(httpmod.user()).allow("x").handle);
        attempt(() => { "use strict"; started.public = () => 1; });
        attempt(() => { const p = app.get("/a").auth(httpmod.user()); const q = p.csrf(); return p !== q && Object.isFrozen(q); });`),
    ).toEqual([
      "ok false",
      'TypeError: app.get("/a").handle is not a function before the route\'s plan is declared: use app.get("/a").public().handle((ctx, res) => ...) or app.get("/a").auth(httpmod.user().required()).allow(action).handle(...): this stage offers .public(), .auth(userSpec) (at /app.js:6:30)',
      'TypeError: app.post("/b").handle is not a function before the route\'s plan is declared: use app.post("/b").public().handle((ctx, res) => ...) or app.post("/b").auth(httpmod.user().required()).allow(action).handle(...): this stage offers .resource(resourceSpec), .csrf(), .audit(event), .rateLimit({limit, windowSeconds, key}), .allow(action) (at /app.js:7:76)',
      "ok function",
      "TypeError: 'public' is read-only",
      "ok true",
    ]);
  });

  it("says how to write the removed two-argument overload", async () => {
    const [message] = await lines(`attempt(() => app.post("/x", () => "old"));`);
    expect(message).toContain("TypeError: app.post(pattern, handler) was removed");
    expect(message).toContain('app.post("/x").public().handle(');
  });

  it("names the method called, what the stage offers and the closest one, for any typo", async () => {
    expect(
      await lines(`
        attempt(() => app.get("/a").pubilc());
        attempt(() => app.get("/a").auth(httpmod.user()).alow("x"));
        attempt(() => app.get("/a").public().hadle(() => 1));
        attempt(() => app.gte("/a"));
        attempt(() => httpmod.usr());
        attempt(() => app.get("/a").auth(httpmod.user()).allow("x").then);`),
    ).toEqual([
      'TypeError: app.get("/a").pubilc is not a function: this stage offers .public(), .auth(userSpec); did you mean .public()? (at /app.js:4:36)',
      'TypeError: app.get("/a").alow is not a function: this stage offers .resource(resourceSpec), .csrf(), .audit(event), .rateLimit({limit, windowSeconds, key}), .allow(action); did you mean .allow(action)? (at /app.js:5:57)',
      'TypeError: app.get("/a").hadle is not a function: this stage offers .audit(event), .rateLimit({limit, windowSeconds, key}), .handle((ctx, res) => ...), .mount(...); did you mean .handle((ctx, res) => ...)? (at /app.js:6:45)',
      "TypeError: app.gte is not a function: app offers .get(pattern), .post(pattern), .put(pattern), .patch(pattern), .delete(pattern), .all(pattern), .route(method, pattern), .mount(...), .mountHandler(...), .static(prefix, directory), .staticFromAssetsModule(...), .spaFromAssetsModule(...); did you mean .get(pattern)? (at /app.js:7:26)",
      "TypeError: httpmod.usr is not a function: httpmod offers .app(), .user(), .resource(type), .html`...`, .raw(markup); did you mean .user()? (at /app.js:8:30)",
      "ok undefined",
    ]);
  });

  it("answers the names a compiler's CommonJS interop reads (__esModule, default) without a typo message", async () => {
    // What `tsc --esModuleInterop` emits for `import httpmod from "httpmod"` and `import * as httpmod`.
    expect(
      await lines(`
        const importDefault = (mod) => (mod && mod.__esModule ? mod : { default: mod });
        const importStar = (mod) => (mod && mod.__esModule ? mod : Object.assign({ default: mod }, mod));
        attempt(() => typeof importDefault(httpmod).default.html);
        attempt(() => typeof importStar(httpmod).raw);
        attempt(() => app.get("/a").public().default);`),
    ).toEqual(["ok function", "ok function", "ok undefined"]);
  });

  it("escapes every value html`` interpolates, keeps its own results and raw(), joins lists, and serves it as HTML", async () => {
    const host = await scriptHost(
      `const { app: make, html, raw } = require("httpmod"); const app = make();
       const row = (x) => html\`<li title="\${x}">\${x}</li>\`;
       app.get("/h/:name").public().handle((ctx) => html\`<h1>\${ctx.params.name}</h1><ul>\${["<a>", "'\\"&"].map(row)}</ul>\${raw("<hr>")}\${null}\${false}\${0}\`);
       app.get("/send").public().handle((ctx, res) => res.status(201).send(html\`plain \${"<x>"}\`));
       app.get("/res").public().handle((ctx, res) => res.html(html\`<p>\${"<y>"}</p>\`));
       app.get("/promise").public().handle(() => html\`\${Promise.resolve(1)}\`);`,
    );
    const page = await call(host, "GET", "/h/%3Cscript%3E");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.text).toBe(
      `<h1>&lt;script&gt;</h1><ul><li title="&lt;a&gt;">&lt;a&gt;</li><li title="&#39;&quot;&amp;">&#39;&quot;&amp;</li></ul><hr>0`,
    );
    const sent = await call(host, "GET", "/send");
    expect([sent.status, sent.headers.get("content-type"), sent.text]).toEqual([201, "text/html; charset=utf-8", "plain &lt;x&gt;"]);
    expect((await call(host, "GET", "/res")).text).toBe("<p>&lt;y&gt;</p>");
    expect((await call(host, "GET", "/promise")).status).toBe(500);
    await host.close();
  });

  it("keeps a request's JSON from passing for markup, and marks every answer nosniff", async () => {
    const host = await scriptHost(
      `const { app: make, html } = require("httpmod"); const app = make();
       app.post("/p").public().handle((ctx) => { Object.prototype.text = "<i>polluted</i>"; try { return html\`\${ctx.body.v}|\${ctx.body.list}\`; } finally { delete Object.prototype.text; } });
       app.get("/echo").public().handle((ctx) => ctx.request.query.q);
       app.get("/own").public().handle((ctx, res) => res.set("X-Content-Type-Options", "nosniff").set("x-a", "1").set("x-a", "2").send("a"));`,
    );
    const body = JSON.stringify({ v: { text: "<script>1</script>", __html: "<b>", isEscaped: true }, list: [{ toString: "<x>", valueOf: 1 }, "<y>"] });
    const forged = await call(host, "POST", "/p", { body, headers: { "content-type": "application/json" } });
    expect([forged.status, forged.text, forged.headers.get("x-content-type-options")]).toEqual([200, "[object Object]|[object Object]&lt;y&gt;", "nosniff"]);
    const echoed = await call(host, "GET", "/echo?q=alert(1)");
    expect([echoed.headers.get("content-type"), echoed.headers.get("x-content-type-options")]).toEqual(["text/plain; charset=utf-8", "nosniff"]);
    expect((await call(host, "GET", "/own")).headers.get("x-content-type-options")).toBe("nosniff");
    await host.close();
  });

  it("escapes a form field of markup as large as a body may be, within the handler's memory", async () => {
    const host = await scriptHost(
      `const { app: make, html } = require("httpmod"); const app = make();
       app.post("/f").public().handle((ctx) => String(html\`<p>\${ctx.body.f}</p>\`.text.length));`,
    );
    const field = "<&>'".repeat(200_000); // 800 KB, under the 1 MiB body limit, every character escaped
    const res = await call(host, "POST", "/f", { body: JSON.stringify({ f: field }), headers: { "content-type": "application/json" } });
    expect([res.status, res.text]).toEqual([200, String(7 + 200_000 * "&lt;&amp;&gt;&#39;".length)]);
    await host.close();
  });

  it("refuses values the module did not make, and chain order mistakes", async () => {
    expect(
      await lines(`
        attempt(() => app.get("/a").auth({ kind: "user", required: () => {} }));
        attempt(() => app.get("/a").auth(Object.freeze({ __spec: { kind: "user", required: true } })));
        attempt(() => app.get("/a").auth(httpmod.resource("doc")));
        attempt(() => app.get("/a").auth(httpmod.user()).resource({ type: "doc" }));
        attempt(() => app.get("/a").auth(httpmod.user()).resource(httpmod.user()));
        attempt(() => app.get("/a").auth(httpmod.user()).allow("x").resource);
        attempt(() => httpmod.resource(""));`),
    ).toEqual([
      "TypeError: .auth(userSpec) accepts only a value made by httpmod.user()",
      "TypeError: .auth(userSpec) accepts only a value made by httpmod.user()",
      "TypeError: .auth(userSpec) accepts only a value made by httpmod.user()",
      "TypeError: .resource(resourceSpec) accepts only a value made by httpmod.resource(type)",
      "TypeError: .resource(resourceSpec) accepts only a value made by httpmod.resource(type)",
      'TypeError: app.get("/a").resource is not a function after .allow(action): declare resources before it: this stage offers .audit(event), .rateLimit({limit, windowSeconds, key}), .handle((ctx, res) => ...), .mount(...) (at /app.js:9:68)',
      "TypeError: httpmod.resource(type): type must be a non-empty string",
    ]);
  });

  it("fails a registration that names a missing parameter, at the script's line, and does not register it", async () => {
    const host = await scriptHost(
      [
        `const httpmod = require("httpmod"); const app = httpmod.app(); let error = "";`,
        `try {`,
        `  app.get("/docs/:docId").auth(httpmod.user()).resource(httpmod.resource("doc").idFromParam("id")).allow("docs:read").handle(() => "x");`,
        `} catch (e) { error = e.message; }`,
        `app.get("/error").public().handle(() => error);`,
      ].join("\n"),
    );
    expect((await call(host, "GET", "/error")).text).toMatch(
      /^GET \/docs\/:docId: resource "doc" reads the path parameter :id, which the pattern does not have \(at \/app\.js:3:\d+\)$/,
    );
    expect(host.routes().map((r) => r.pattern)).toEqual(["/error"]);
    expect((await call(host, "GET", "/docs/1")).status).toBe(404);
  });

  it("fails the whole load when a registration error is not caught, keeping nothing of it", async () => {
    await expect(scriptHost(`const h = require("httpmod"); h.app().get("bad").public().handle(() => 1);`)).rejects.toThrow(
      /failed to load: Error: route pattern "bad" must start with "\/" \(at \/app\.js:1:\d+\)/,
    );
  });

  it("answers the same whether the dispatcher sends the short form (200, a helper's type, a string) or JSON", async () => {
    const host = await scriptHost(
      `const httpmod = require("httpmod"); const app = httpmod.app();
       app.get("/text").public().handle(() => "\u0001starts with a control character, ends in é ✓");
       app.get("/empty").public().handle(() => "");
       app.get("/nbsp").public().handle(() => "\u00a0<b>html after a no-break space</b>");
       app.get("/none").public().handle((ctx, res) => res.send(null));
       app.get("/json").public().handle((ctx, res) => res.json({ a: "\u2028" }));
       app.get("/typed").public().handle((ctx, res) => res.type("text/csv").send("<not html>"));
       app.get("/status").public().handle((ctx, res) => res.status(202).send("accepted"));
       app.get("/session").public().handle((ctx) => "session " + typeof ctx.request.session.id);
       app.get("/session-json").public().handle((ctx, res) => res.status(201).json({ isNew: ctx.request.session.isNew }));
       app.get("/later").public().handle(async (ctx) => { await null; return "late " + (ctx.request.session ? "read" : ""); });
       app.get("/patched").public().handle(() => { JSON.parse = () => ({}); JSON.stringify = () => "nope"; Object.defineProperty = () => {}; return "patched"; });`,
    );
    const answer = async (path: string) => {
      const res = await call(host, "GET", path);
      return [
        res.status,
        [...res.headers].filter(([name]) => name !== "set-cookie" && name !== "x-content-type-options"),
        res.text,
        res.headers.has("set-cookie"),
      ];
    };
    const TEXT = ["content-type", "text/plain; charset=utf-8"];
    expect(await answer("/text")).toEqual([200, [TEXT], "\u0001starts with a control character, ends in é ✓", false]);
    expect(await answer("/empty")).toEqual([200, [TEXT], "", false]);
    expect(await answer("/nbsp")).toEqual([200, [["content-type", "text/html; charset=utf-8"]], "\u00a0<b>html after a no-break space</b>", false]);
    expect(await answer("/none")).toEqual([200, [], "", false]);
    expect(await answer("/json")).toEqual([200, [["content-type", "application/json"]], '{"a":"\u2028"}', false]);
    expect(await answer("/typed")).toEqual([200, [["content-type", "text/csv"]], "<not html>", false]);
    expect(await answer("/status")).toEqual([202, [TEXT], "accepted", false]);
    expect(await answer("/session")).toEqual([200, [TEXT], "session string", true]);
    expect(await answer("/session-json")).toEqual([201, [["content-type", "application/json"]], '{"isNew":true}', true]);
    expect(await answer("/later")).toEqual([200, [TEXT], "late read", true]);
    // The dispatcher keeps the built-ins it started with: a script that replaces them changes its
    // own calls, not how its requests are read and answered.
    expect(await answer("/patched")).toEqual([200, [TEXT], "patched", false]);
    expect(await answer("/session-json")).toEqual([201, [["content-type", "application/json"]], '{"isNew":true}', true]);
    await host.close();
  });

  it("hands a plain answer out as its text (dispatchText), and anything else as dispatch does", async () => {
    const sandbox = await loadScriptSandbox(
      await loadQuickJS(),
      {
        entry: "/app.js",
        files: {
          "/app.js": `const app = require("httpmod").app();
            app.get("/a").public().handle(() => "plain");
            app.get("/b").public().handle((ctx, res) => res.json({ session: ctx.request.session }));
            app.get("/c").public().handle(() => { console.log("said"); return "plain"; });
            app.get("/d").public().handle((ctx, res) => res.status(201).send("made"));`,
        },
      },
      { mountables: {}, assets: {}, staticFiles: false, services: {} },
    );
    const input = JSON.stringify({
      request: {
        method: "GET",
        url: "http://h/a",
        path: "/a",
        query: {},
        params: {},
        headers: {},
        cookies: {},
        session: { id: "s" },
        ip: "",
        body: null,
        rawBody: "",
      },
      actor: null,
      resources: {},
      routeName: "GET /a",
    });
    for (const handler of [0, 1]) {
      const text = await sandbox.dispatchText(handler, input);
      const outcome = await sandbox.dispatch(handler, input);
      expect(typeof text === "string" && isCompactAnswer(text)).toBe(true);
      expect(outcome.ok && { ok: true, response: compactAnswerResponse(text as string), console: [] }).toEqual(outcome);
    }
    expect(compactAnswerResponse((await sandbox.dispatchText(1, input)) as string)).toEqual({
      status: 200,
      headers: [["content-type", "application/json"]],
      body: '{"session":{"id":"s"}}',
      sessionUsed: true,
    });
    expect(await sandbox.dispatchText(2, input)).toEqual(await sandbox.dispatch(2, input));
    expect(await sandbox.dispatchText(2, input)).toMatchObject({ ok: true, console: [{ level: "log", text: "said" }] });
    expect(await sandbox.dispatchText(3, input)).toEqual({
      ok: true,
      response: { status: 201, headers: [["content-type", "text/plain; charset=utf-8"]], body: "made" },
      console: [],
    });
    expect(isCompactAnswer('{"status":201}')).toBe(false);
    sandbox.dispose();
  });

  it("cannot reach the host's files, network, environment or other modules", async () => {
    expect(
      await lines(
        `
        attempt(() => typeof fetch + typeof process + typeof Deno + typeof XMLHttpRequest + typeof WebSocket);
        attempt(() => require("fs"));
        attempt(() => require("httpmod:host").route({ method: "GET", pattern: "/forged", public: true }));
        attempt(() => require("httpmod:host").claim());
        attempt(() => require("/etc/passwd"));
        attempt(() => require("../../../etc/passwd"));
        attempt(() => require("./lib.js").secret);
        attempt(() => app.static("/s", "/etc"));
        attempt(() => app.static("/s", "../.."));
        attempt(() => app.mount("/m", { $mountable: "guess" }));`,
        { extraFiles: { "/lib.js": "exports.secret = 'from a file beside the script';" } },
      ),
    ).toEqual([
      "ok undefinedundefinedundefinedundefinedundefined",
      "Error: Cannot find module 'fs'",
      "Error: httpmod:host answers only httpmod",
      'Error: httpmod:host was already claimed: require("httpmod") instead',
      "Error: Cannot find module '/etc/passwd'",
      "Error: Cannot find module '../../../etc/passwd'",
      "ok from a file beside the script",
      expect.stringMatching(/^Error: app.static is not available on this host .* \(at \/app\.js:11:\d+\)$/),
      expect.stringMatching(/^Error: app.static is not available on this host .* \(at \/app\.js:12:\d+\)$/),
      expect.stringMatching(/^Error: app.mount\(prefix, mountable\) accepts only a mountable made by a host module \(at \/app\.js:13:\d+\)$/),
    ]);
  });
});
