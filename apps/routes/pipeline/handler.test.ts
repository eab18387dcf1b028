/** The handler stage: a host handler, a guarded mount or a script handler answers, once authorized. */
import { describe, expect, it, vi } from "vitest";
import type { Logger } from "#lib/log";
import type { ServeEnv } from "#lib/runtime";
import { compileRoutePlan, type RoutePlan } from "../core/plan.ts";
import type { AuthServices } from "../core/services.ts";
import type { HostPlannedContext } from "../core/types.ts";
import type { ScriptRuntime } from "../script/runtime.ts";
import type { DispatchInput, DispatchOutcome } from "../script/script-sandbox.ts";
import { auditStage } from "./audit.ts";
import { bodyStage } from "./body.ts";
import { handlerStage, type Target } from "./handler.ts";
import { requestStage } from "./request.ts";
import { type Stage, stateOf } from "./state.ts";
import { alice, collecting, doc, DOCS, sessions, stageApp } from "./testing.ts";

const authed = compileRoutePlan({
  method: "POST",
  pattern: DOCS,
  public: false,
  auth: { required: true },
  resources: [{ type: "doc", idParam: "id" }],
  csrf: true,
  action: "docs:write",
  audit: "doc.write",
});
const open = compileRoutePlan({ method: "ALL", pattern: DOCS, public: true, audit: "doc.public" });

function quietLog() {
  const log = { log: vi.fn(), debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn(), enabled: () => true, child: () => log };
  return log;
}

interface Options {
  plan?: RoutePlan;
  pattern?: string;
  auth?: AuthServices;
  runtime?: ScriptRuntime;
  dev?: boolean;
  log?: Logger;
  /** Stand in for authenticate and resources: alice and the doc. */
  signedIn?: boolean;
}

/** request -> audit -> body -> (alice and her doc) -> handler. */
function app(target: Target, options: Options = {}) {
  const plan = options.plan ?? authed;
  const sink = collecting();
  const deps = {
    auth: options.auth ?? {},
    sessions,
    maxBodyBytes: 1024,
    dev: options.dev ?? false,
    log: options.log,
    now: () => new Date(),
    runtime: options.runtime,
  };
  const signedIn: Stage = async (c, next) => {
    const state = stateOf(c);
    if (options.signedIn ?? !plan.public) {
      state.actor = alice;
      state.resources = { doc };
    }
    await next();
  };
  const fetch = stageApp(
    options.pattern ?? DOCS,
    [requestStage(plan, deps), auditStage({ ...plan, audit: plan.audit! }, sink, deps), bodyStage(deps), signedIn, handlerStage(plan, target, deps)],
    { dev: deps.dev, env: { clientAddress: "10.0.0.1" } },
  );
  return { fetch, events: sink.events };
}

const write: RequestInit = { method: "POST", body: '{"text":"hi"}', headers: { "content-type": "application/json" } };
const csrf = (token = vi.fn((session: { id: string }) => `token-for-${session.id}`)) => ({ verify: () => true, token });

describe("handlerStage: a host handler", () => {
  it("gets the planned context, records allowed then completed, and its answer goes out", async () => {
    let ctx: HostPlannedContext | undefined;
    const { fetch, events } = app(
      {
        kind: "host",
        handler: (c) => {
          ctx = c;
          return new Response("written", { status: 201 });
        },
      },
      { auth: { csrf: csrf() } },
    );
    const res = await fetch("/t/t1/docs/d1?x=1", write);
    expect(res.status).toBe(201);
    expect(await res.text()).toBe("written");
    expect(ctx!.actor).toEqual(alice);
    expect(ctx!.body).toEqual({ text: "hi" });
    expect(ctx!.params).toEqual({ tenant: "t1", id: "d1" });
    expect(ctx!.resources).toEqual({ doc });
    expect(ctx!.resource("doc")).toEqual(doc);
    expect(ctx!.resource("other")).toBeNull();
    expect(ctx!.action).toBe("docs:write");
    expect(ctx!.routeName).toBe("POST /t/:tenant/docs/:id");
    expect(ctx!.raw).toBeInstanceOf(Request);
    expect(ctx!.raw.url).toBe("http://host.test/t/t1/docs/d1?x=1");
    expect(ctx!.request).toMatchObject({ method: "POST", path: "/t/t1/docs/d1", query: { x: "1" }, ip: "10.0.0.1", rawBody: '{"text":"hi"}' });
    expect(events.map((e) => [e.outcome, e.statusCode])).toEqual([
      ["allowed", undefined],
      ["completed", 201],
    ]);
  });

  it("gives an authenticated route the CSRF token of its session, and issues the new session's cookie for it", async () => {
    let token: string | undefined;
    const { fetch } = app(
      {
        kind: "host",
        handler: (c) => {
          token = c.csrfToken;
          return new Response("page");
        },
      },
      { auth: { csrf: csrf() } },
    );
    const res = await fetch("/t/t1/docs/d1", write);
    const cookie = res.headers.getSetCookie();
    expect(cookie).toHaveLength(1);
    const id = /^routes_session=([0-9a-f-]{36})\./.exec(cookie[0]!)?.[1];
    expect(id).toBeDefined();
    // The token is bound to the session whose cookie went out.
    expect(token).toBe(`token-for-${id}`);
  });

  it("gives a public route no CSRF token and sets no cookie, unless the handler reads the session", async () => {
    const token = vi.fn(() => "never");
    let given: string | undefined = "unset";
    const quiet = app(
      {
        kind: "host",
        handler: (c) => {
          given = c.csrfToken;
          return new Response("open");
        },
      },
      { plan: open, auth: { csrf: csrf(token) } },
    );
    const res = await quiet.fetch("/t/t1/docs/d1");
    expect(res.status).toBe(200);
    expect(given).toBeUndefined();
    expect(token).not.toHaveBeenCalled();
    expect(res.headers.get("set-cookie")).toBeNull();

    let sessionId: string | undefined;
    const reads = app({ kind: "host", handler: (c) => ((sessionId = c.request.session?.id), new Response("seen")) }, { plan: open });
    const read = await reads.fetch("/t/t1/docs/d1");
    expect(read.headers.get("set-cookie")).toMatch(new RegExp(`^routes_session=${sessionId}\\.`));
  });

  it("issues no cookie for a session the client already has, even when the handler reads it", async () => {
    const reads = app({ kind: "host", handler: (c) => new Response(c.request.session?.id) }, { plan: open });
    const first = await reads.fetch("/t/t1/docs/d1");
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    const again = await reads.fetch("/t/t1/docs/d1", { headers: { cookie } });
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get("set-cookie")).toBeNull();
  });
});

describe("handlerStage: a guarded mount", () => {
  const guarded = compileRoutePlan({ method: "ALL", pattern: "/api/*", public: false, auth: { required: true }, action: "api:use", audit: "api.use" });

  function mounted(strip: boolean) {
    const calls: { url: string; method: string; headers: Headers; body: string | null; env: ServeEnv }[] = [];
    const handler = async (request: Request, env: ServeEnv) => {
      calls.push({ url: request.url, method: request.method, headers: request.headers, body: request.body ? await request.text() : null, env });
      return new Response("from the mount", { status: 202, headers: { "x-mounted": "yes" } });
    };
    const { fetch, events } = app({ kind: "mount", handler, prefix: "/api", strip, at: "app.js:3" }, { plan: guarded, pattern: "/api/*" });
    return { fetch, events, calls };
  }

  it("hands the mount the request below its prefix, its body re-attached, and passes its answer on", async () => {
    const { fetch, events, calls } = mounted(true);
    const res = await fetch("/api/users/7?x=1", { method: "PUT", body: "payload", headers: { "content-type": "text/plain", "x-custom": "v" } });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("from the mount");
    expect(res.headers.get("x-mounted")).toBe("yes");
    expect(res.headers.get("cache-control")).toBe("no-store"); // an actor's answer
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ url: "http://host.test/users/7?x=1", method: "PUT", body: "payload" });
    expect(calls[0]!.headers.get("x-custom")).toBe("v");
    expect(calls[0]!.env).toMatchObject({ requestId: "r1", clientAddress: "10.0.0.1", mountPrefix: "/api" });
    expect(events.map((e) => e.outcome)).toEqual(["allowed", "completed"]);
  });

  it("keeps the path as it came without stripPrefix, gives / for the prefix itself, and sends a GET no body", async () => {
    const kept = mounted(false);
    await kept.fetch("/api/users/7");
    expect(kept.calls[0]).toMatchObject({ url: "http://host.test/api/users/7", method: "GET", body: null });

    const root = mounted(true);
    await root.fetch("/api");
    expect(root.calls[0]!.url).toBe("http://host.test/");

    const encoded = mounted(true);
    await encoded.fetch("/api/a%2Fb");
    expect(encoded.calls[0]!.url).toBe("http://host.test/a%2Fb");
  });

  // A mountable that depends on it (the identity provider's withoutIssuerAlias) would otherwise
  // serve the never-advertised alias `/idp/idp/...` behind a guarded, stripping mount.
  it("tells the mountable whether its prefix was stripped (mountStripped), as an unguarded mount does", async () => {
    const stripped = mounted(true);
    await stripped.fetch("/api/users");
    expect(stripped.calls[0]!.env.mountStripped).toBe(true);
    const kept = mounted(false);
    await kept.fetch("/api/users");
    expect(kept.calls[0]!.env.mountStripped).toBe(false);
  });
});

describe("handlerStage: a script handler", () => {
  const ok = (response: Partial<Extract<DispatchOutcome, { ok: true }>["response"]> = {}): DispatchOutcome => ({
    ok: true,
    response: { status: 200, headers: [], body: "from the script", ...response },
    console: [],
  });

  function runtime(outcome: DispatchOutcome) {
    const inputs: [number, DispatchInput][] = [];
    const rt: ScriptRuntime = {
      load: async () => [],
      dispatch: async (handler, input) => {
        inputs.push([handler, input]);
        return outcome;
      },
      ready: async () => {},
      close: async () => {},
    };
    return { rt, inputs };
  }

  const script: Target = { kind: "script", handler: 4, at: "app.js:12" };

  it("dispatches the request as data with the actor, resources, action, route name and CSRF token, and sends the script's answer", async () => {
    const { rt, inputs } = runtime(ok({ status: 201, headers: [["X-Thing", "1"], ["Content-Type", "text/csv"]], body: "a,b" }));
    const { fetch, events } = app(script, { runtime: rt, auth: { csrf: csrf() } });
    const res = await fetch("/t/t1/docs/d1", write);
    expect(res.status).toBe(201);
    expect(await res.text()).toBe("a,b");
    expect(res.headers.get("x-thing")).toBe("1");
    expect(res.headers.get("content-type")).toBe("text/csv");
    expect(inputs).toHaveLength(1);
    const [handler, input] = inputs[0]!;
    expect(handler).toBe(4);
    expect(input).toMatchObject({
      actor: alice,
      resources: { doc },
      action: "docs:write",
      routeName: "POST /t/:tenant/docs/:id",
      csrfToken: expect.stringMatching(/^token-for-[0-9a-f-]{36}$/),
    });
    expect(input.request).toMatchObject({ method: "POST", path: "/t/t1/docs/d1", params: { tenant: "t1", id: "d1" }, body: { text: "hi" } });
    expect(events.map((e) => [e.outcome, e.statusCode])).toEqual([
      ["allowed", undefined],
      ["completed", 201],
    ]);
  });

  it("issues the session cookie when the script read the session, and not otherwise", async () => {
    const used = app(script, { plan: open, runtime: runtime(ok({ sessionUsed: true })).rt });
    expect((await used.fetch("/t/t1/docs/d1")).headers.get("set-cookie")).toMatch(/^routes_session=[0-9a-f-]{36}\./);
    const unused = app(script, { plan: open, runtime: runtime(ok()).rt });
    expect((await unused.fetch("/t/t1/docs/d1")).headers.get("set-cookie")).toBeNull();
  });

  it("answers a failed handler 500 HANDLER_FAILED, its message only in dev mode, logged with its console, audited as failed", async () => {
    const failed: DispatchOutcome = {
      ok: false,
      failure: "error",
      message: "TypeError: secret detail",
      stack: "at handler (app.js:12)",
      console: [{ level: "warn", text: "about to fail" }],
    };
    const log = quietLog();
    const { fetch, events } = app(script, { runtime: runtime(failed).rt, log: log as unknown as Logger });
    const res = await fetch("/t/t1/docs/d1", write);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "HANDLER_FAILED", message: "internal error" } });
    expect(log.info).toHaveBeenCalledWith("script console", { request_id: "r1", route: "POST /t/:tenant/docs/:id", level: "warn", text: "about to fail" });
    expect(log.error).toHaveBeenCalledWith("handler failed", {
      request_id: "r1",
      route: "POST /t/:tenant/docs/:id",
      failure: "error",
      error: "TypeError: secret detail",
      stack: "at handler (app.js:12)",
      at: "app.js:12",
    });
    expect(events.map((e) => [e.outcome, e.statusCode, e.reason])).toEqual([
      ["allowed", undefined, undefined],
      ["failed", 500, "handler_error"],
    ]);

    const dev = app(script, { runtime: runtime(failed).rt, dev: true });
    expect(await (await dev.fetch("/t/t1/docs/d1", write)).json()).toEqual({ error: { code: "HANDLER_FAILED", message: "TypeError: secret detail" } });
  });

  it("refuses a script answer that would split the response: 500, the header never on the wire", async () => {
    const log = quietLog();
    const { fetch } = app(script, { runtime: runtime(ok({ headers: [["X-Bad", "a\r\nSet-Cookie: evil=1"]] })).rt, log: log as unknown as Logger });
    const res = await fetch("/t/t1/docs/d1", write);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "HANDLER_FAILED", message: "internal error" } });
    expect(res.headers.get("x-bad")).toBeNull();
    expect(res.headers.get("set-cookie") ?? "").not.toContain("evil");
    expect(log.error).toHaveBeenCalledWith("handler response refused", expect.objectContaining({ request_id: "r1", at: "app.js:12" }));
  });

  it("answers 500 without a script runtime (NO_RUNTIME in dev mode, INTERNAL otherwise)", async () => {
    const prod = await app(script).fetch("/t/t1/docs/d1", write);
    expect(prod.status).toBe(500);
    expect(await prod.json()).toEqual({ error: { code: "INTERNAL", message: "internal error" } });
    const dev = await app(script, { dev: true }).fetch("/t/t1/docs/d1", write);
    expect(await dev.json()).toEqual({ error: { code: "NO_RUNTIME", message: "no script runtime is configured" } });
  });
});
