/** The host's pipeline: the order of its stages and their statuses, failing closed, and audit. */
import { describe, expect, it } from "vitest";
import type { RouteHost } from "./host.ts";
import { type Actor, type AuditEvent, AuthenticationError, type AuthServices, ResourceNotFoundError } from "../core/services.ts";
import { call, scriptHost } from "../testing.ts";

const PRELUDE = `const httpmod = require("httpmod"); const app = httpmod.app(); const user = httpmod.user().required();`;

describe("the pipeline", () => {
  const alice: Actor = { id: "alice", kind: "user", tenantIds: ["t1"] };

  /** Services that record what the pipeline asked, in order. */
  function services(
    overrides: Partial<{ actor: Actor | null; authError: boolean; csrfOk: boolean; resource: "found" | "missing" | "throw"; allow: boolean }> = {},
  ) {
    const seen: string[] = [];
    const audit: AuditEvent[] = [];
    const o = { actor: alice, authError: false, csrfOk: true, resource: "found", allow: true, ...overrides };
    const auth: Required<AuthServices> = {
      authenticator: {
        authenticate() {
          seen.push("authenticate");
          if (o.authError) throw new AuthenticationError("invalid_token", "the token has expired");
          return o.actor;
        },
        challenge: (_req, err) => `Bearer realm="test"${err ? `, error="${err.code}"` : ""}`,
      },
      csrf: {
        verify(req) {
          seen.push(`csrf ${req.script.headers["x-csrf"] ?? ""}`);
          return o.csrfOk;
        },
        token: (session) => `token-for-${session.id.slice(0, 4)}`,
      },
      resources: {
        resolve(q) {
          seen.push(`resolve ${q.type} ${q.id} ${q.tenantId}`);
          if (o.resource === "throw") throw new ResourceNotFoundError("gone");
          return o.resource === "found" ? { id: q.id!, tenantId: q.tenantId ?? "t1", title: "Doc" } : null;
        },
      },
      authorizer: {
        authorize(input) {
          seen.push(`authorize ${input.action} ${input.actor?.id} ${input.resource?.id}`);
          return o.allow ? { allow: true } : { allow: false, reason: "not in group" };
        },
      },
      audit: { record: (e) => void audit.push(e) },
    };
    return { auth, seen, audit };
  }

  const SCRIPT = `${PRELUDE}
    const doc = httpmod.resource("doc").idFromParam("id").tenantFromParam("tenant").mustExist();
    app.post("/t/:tenant/docs/:id").auth(user).resource(doc).csrf().allow("docs:write").audit("doc.write")
      .handle((ctx) => JSON.stringify({ actor: ctx.actor.id, doc: ctx.resource("doc"), none: ctx.resource("other"), action: ctx.action, route: ctx.routeName, body: ctx.body, csrf: ctx.csrfToken.slice(0, 10) }));
    app.get("/t/:tenant/docs/:id").auth(httpmod.user()).resource(httpmod.resource("doc").idFromParam("id")).allow("docs:read").handle((ctx) => ctx.resource("doc") === null ? "no doc" : "doc " + ctx.resource("doc").id);
    app.get("/public").public().audit("public.read").handle(() => "open");
    app.post("/public-csrf").auth(user).csrf().allow("x").handle(() => "ok");
    app.get("/fails").auth(user).allow("x").audit("fails").handle(() => { throw new Error("broken"); });`;

  const write = (host: RouteHost, headers: Record<string, string> = {}, body = '{"text":"hi"}') =>
    call(host, "POST", "/t/t1/docs/d1", { body, headers: { "content-type": "application/json", "x-csrf": "good", ...headers } });

  it("runs body, authenticate, CSRF, resources, authorize, handler in that order, and audits allowed then completed", async () => {
    const { auth, seen, audit } = services();
    const host = await scriptHost(SCRIPT, { auth });
    const res = await write(host);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      actor: "alice",
      doc: { id: "d1", tenantId: "t1", title: "Doc" },
      none: null,
      action: "docs:write",
      route: "POST /t/:tenant/docs/:id",
      body: { text: "hi" },
      csrf: "token-for-",
    });
    expect(seen).toEqual(["authenticate", "csrf good", "resolve doc d1 t1", "authorize docs:write alice d1"]);
    expect(audit.map((e) => e.outcome)).toEqual(["allowed", "completed"]);
    expect(audit[1]).toMatchObject({
      event: "doc.write",
      outcome: "completed",
      statusCode: 200,
      routeName: "POST /t/:tenant/docs/:id",
      method: "POST",
      pattern: "/t/:tenant/docs/:id",
      action: "docs:write",
      actor: alice,
      resource: { id: "d1", tenantId: "t1" },
      requestId: "req-1",
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    await host.close();
  });

  it.each(
    [
      ["bad JSON", {}, { body: "{" }, 400, "INVALID_JSON", [], "invalid_json"],
      ["no credentials", { actor: null }, {}, 401, "UNAUTHENTICATED", ["authenticate"], "no_credentials"],
      ["invalid credentials", { authError: true }, {}, 401, "UNAUTHENTICATED", ["authenticate"], "invalid_token"],
      ["a bad CSRF token", { csrfOk: false }, {}, 403, "CSRF_FAILED", ["authenticate", "csrf good"], "csrf"],
      ["a missing resource", { resource: "missing" }, {}, 404, "NOT_FOUND", ["authenticate", "csrf good", "resolve doc d1 t1"], "resource_not_found"],
      ["the host's not-found error", { resource: "throw" }, {}, 404, "NOT_FOUND", ["authenticate", "csrf good", "resolve doc d1 t1"], "resource_not_found"],
      ["a denial", { allow: false }, {}, 403, "FORBIDDEN", ["authenticate", "csrf good", "resolve doc d1 t1", "authorize docs:write alice d1"], "not in group"],
    ] as const,
  )("stops at %s: %i, later steps not run, audited as denied", async (_name, overrides, req, status, code, steps, reason) => {
    const { auth, seen, audit } = services(overrides);
    const host = await scriptHost(SCRIPT, { auth });
    const res = await write(host, {}, "body" in req ? req.body : undefined);
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(code);
    expect(seen).toEqual(steps);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: "denied", reason, statusCode: status });
    if (status === 401) expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="test"/);
    await host.close();
  });

  it("gives a route without .mustExist() a null resource, and checks CSRF only on unsafe methods", async () => {
    const { auth, seen } = services({ resource: "missing" });
    const host = await scriptHost(SCRIPT, { auth });
    expect((await call(host, "GET", "/t/t1/docs/d9")).text).toBe("no doc");
    expect(seen).toEqual(["authenticate", "resolve doc d9 undefined", "authorize docs:read alice undefined"]);
    await host.close();
  });

  it("audits a throwing handler as allowed then failed, and a public route too", async () => {
    const { auth, audit } = services();
    const host = await scriptHost(SCRIPT, { auth });
    expect((await call(host, "GET", "/fails")).status).toBe(500);
    expect(audit.map((e) => [e.outcome, e.statusCode])).toEqual([
      ["allowed", undefined],
      ["failed", 500],
    ]);
    expect((await call(host, "GET", "/public")).text).toBe("open");
    expect(audit.slice(2).map((e) => [e.event, e.outcome])).toEqual([
      ["public.read", "allowed"],
      ["public.read", "completed"],
    ]);
    await host.close();
  });

  it("writes no audit events without a sink, or for routes without .audit", async () => {
    const { auth, audit } = services();
    const noSink = await scriptHost(SCRIPT, { auth: { ...auth, audit: undefined } });
    expect((await write(noSink)).status).toBe(200);
    await noSink.close();
    const host = await scriptHost(SCRIPT, { auth });
    expect((await call(host, "GET", "/t/t1/docs/d1")).status).toBe(200);
    expect(audit).toEqual([]);
    await host.close();
  });

  // Every combination of missing services the write route needs: each is a 500, nothing runs.
  const NEEDED = ["authenticator", "authorizer", "resources", "csrf"] as const;
  const combos = Array.from({ length: 2 ** NEEDED.length - 1 }, (_, i) => NEEDED.filter((_, bit) => ((i + 1) >> bit) & 1));
  it.each(combos.map((missing) => [missing.join(" + "), missing] as const))("fails closed without %s: 500, no step runs", async (_name, missing) => {
    const { auth, seen } = services();
    const partial: AuthServices = { ...auth };
    for (const m of missing) delete partial[m];
    const host = await scriptHost(SCRIPT, { auth: partial, dev: true });
    const res = await write(host);
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe("SERVICE_MISSING");
    expect(seen).toEqual([]);
    const prod = await scriptHost(SCRIPT, { auth: partial });
    expect((await write(prod)).json).toEqual({ error: { code: "INTERNAL", message: "internal error" } });
    await host.close();
    await prod.close();
  });

  it("fails closed for a CSRF route on an unsafe method without a CSRF protector, even when public auth is fine", async () => {
    const { auth } = services();
    const host = await scriptHost(SCRIPT, { auth: { ...auth, csrf: undefined } });
    expect((await call(host, "POST", "/public-csrf")).status).toBe(500);
    expect((await call(host, "GET", "/public")).status).toBe(200);
    await host.close();
  });

  it("runs host-registered planned routes through the same pipeline, before script routes", async () => {
    const { auth, seen } = services();
    const host = await scriptHost(`${PRELUDE} app.get("/host").public().handle(() => "script");`, { auth });
    host.registerPlanned(
      { method: "GET", pattern: "/host", public: false, auth: { required: true }, action: "host:read" },
      (ctx) => new Response(`host sees ${ctx.actor?.id}`),
    );
    expect((await call(host, "GET", "/host")).text).toBe("host sees alice");
    expect(seen).toEqual(["authenticate", "authorize host:read alice undefined"]);
    expect(host.routes().map((r) => [r.pattern, r.source, r.access])).toEqual([
      ["/host", "host", "auth"],
      ["/host", "script", "public"],
    ]);
    expect(() =>
      host.registerPlanned(
        { method: "GET", pattern: "/x/:a", public: false, auth: { required: true }, action: "a", resources: [{ type: "d", idParam: "b" }] },
        () => new Response(),
      )
    ).toThrow(":b");
    await host.close();
  });

  it("refuses raw routes when rejectRawRoutes is set, and serves planned ones", async () => {
    const open = await scriptHost(`${PRELUDE}`);
    open.registerRaw("GET", "/raw/:x", (_req, params) => new Response(`raw ${params.x}`));
    expect((await call(open, "GET", "/raw/1")).text).toBe("raw 1");
    const strict = await scriptHost(`${PRELUDE} app.get("/p/:x").public().handle((ctx) => "planned " + ctx.params.x);`, { rejectRawRoutes: true });
    strict.registerRaw("GET", "/raw/:x", () => new Response("never"));
    strict.registerPlanned({ method: "GET", pattern: "/h/:x", public: true }, (ctx) => new Response(`host ${ctx.params.x}`));
    const res = await call(strict, "GET", "/raw/1");
    expect(res.status).toBe(403);
    expect(res.json.error).toEqual({ code: "RAW_ROUTES_DISABLED", message: "raw routes are disabled on this host: the route has no plan" });
    expect(await call(strict, "GET", "/p/1")).toMatchObject({ status: 200, text: "planned 1" });
    expect(await call(strict, "GET", "/h/2")).toMatchObject({ status: 200, text: "host 2" });
    await open.close();
    await strict.close();
  });
});
