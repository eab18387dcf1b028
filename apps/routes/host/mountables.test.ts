/** The identity provider mounted behind a script, in this process. */
import { describe, expect, it } from "vitest";
import { idpMountable, loopbackCallersOnly } from "./mountables.ts";
import { call, scriptHost } from "../testing.ts";

describe("require('idp').handler()", () => {
  it("serves the identity provider under the mount's prefix, with that prefix in its issuer", async () => {
    const host = await scriptHost(
      `const app = require("httpmod").app();
       app.mount("/idp", require("idp").handler());
       app.mount("/auth-server", require("idp").handler(), { stripPrefix: true });
       app.get("/").public().handle(() => "home");`,
      { mountables: { idp: { handler: idpMountable() } } },
    );
    const discovery = (await call(host, "GET", "/idp/.well-known/openid-configuration")).json;
    expect(discovery.issuer).toBe("http://host.test/idp");
    expect(discovery.authorization_endpoint).toBe("http://host.test/idp/authorize");
    expect((await call(host, "GET", discovery.jwks_uri.replace("http://host.test", ""))).json.keys.length).toBeGreaterThan(0);
    expect((await call(host, "GET", "/auth-server/.well-known/openid-configuration")).json.issuer).toBe("http://host.test/auth-server");
    expect((await call(host, "GET", "/")).text).toBe("home");
    expect(host.routes().filter((r) => r.kind === "mount").map((r) => r.pattern)).toEqual(["/idp", "/auth-server"]);
    await host.close();
  });
});

describe("a planned route whose target is a mountable", () => {
  it("runs the pipeline first, then hands the request on as it came (body, query, stripped prefix)", async () => {
    const seen: string[] = [];
    const echo = async (req: Request, env: { mountPrefix?: string }) =>
      new Response(`${req.method} ${new URL(req.url).pathname}${new URL(req.url).search} ${await req.text()} (mounted at ${env.mountPrefix})`);
    const host = await scriptHost(
      `const h = require("httpmod"); const app = h.app();
       app.all("/api/*").auth(h.user().required()).allow("api:use").audit("api").mount(require("echo").handler(), { stripPrefix: true });
       app.get("/raw/*").public().mount(require("echo").handler());`,
      {
        mountables: { echo: { handler: echo } },
        auth: {
          authenticator: { authenticate: (req) => (req.script.headers["x-user"] ? { id: "u", kind: "user" } : null) },
          authorizer: { authorize: ({ action }) => ({ allow: action === "api:use" }) },
          audit: { record: (e) => void seen.push(`${e.event} ${e.outcome}`) },
        },
      },
    );
    expect((await call(host, "POST", "/api/things?x=1", { headers: { "x-user": "u", "content-type": "application/json" }, body: '{"a":1}' })).text).toBe(
      'POST /things?x=1 {"a":1} (mounted at /api)',
    );
    expect((await call(host, "GET", "/api/things")).status).toBe(401);
    expect((await call(host, "GET", "/raw/a/b")).text).toBe("GET /raw/a/b  (mounted at /raw)");
    expect(seen).toEqual(["api allowed", "api completed", "api denied"]);
    expect(host.routes().find((r) => r.pattern === "/api/*")).toMatchObject({
      access: "auth",
      action: "api:use",
      audit: "api",
      source: "script",
      at: expect.stringMatching(/^\/app\.js:2:\d+$/),
    });
    await expect(
      scriptHost(`const h = require("httpmod"); h.app().get("/x").public().mount(require("echo").handler(), { stripPrefix: true });`, {
        mountables: { echo: { handler: echo } },
      }),
    ).rejects.toThrow(
      "stripPrefix: true }) needs a pattern that ends in /*",
    );
    await host.close();
  });
});

describe("the session service's mount", () => {
  // In-process it has no access token: a caller off this machine (a LAN peer of a host on 0.0.0.0,
  // or one a trusted proxy names) could otherwise run code through it after a sign-in that the
  // mounted development provider grants to anyone.
  it("answers callers on this machine only", async () => {
    const sessions = loopbackCallersOnly(() => new Response("ran code"));
    const host = await scriptHost(
      `const app = require("httpmod").app();
       app.mount("/sessions", require("sessions").handler(), { stripPrefix: true });`,
      { mountables: { sessions: { handler: sessions } } },
    );
    const from = (clientAddress: string) => host.fetch(new Request("http://host.test/sessions/api/v1/health"), { requestId: "r", clientAddress });
    expect(await (await from("127.0.0.1")).text()).toBe("ran code");
    expect(await (await from("::1")).text()).toBe("ran code");
    for (const address of ["192.0.2.2", "203.0.113.9", "", "::ffff:192.0.2.2"]) {
      const res = await from(address);
      expect(res.status, address).toBe(403);
      expect((await res.json()).error.code, address).toBe("FORBIDDEN");
    }
  });
});
