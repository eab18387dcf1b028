/** The audit stage: one record per outcome, with the reason of a denial, written before the answer. */
import { describe, expect, it, vi } from "vitest";
import type { Logger } from "#lib/log";
import { compileRoutePlan, type RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import { type AuditSink, AuthenticationError, type AuthServices, type ResourceRef } from "../core/services.ts";
import type { HostHandler } from "../core/types.ts";
import { auditStage } from "./audit.ts";
import { authenticateStage } from "./authenticate.ts";
import { bodyStage } from "./body.ts";
import { failClosedStage } from "./fail-closed.ts";
import { handlerStage } from "./handler.ts";
import { requestStage } from "./request.ts";
import { type Stage, type StageDeps, stateOf } from "./state.ts";
import { alice, collecting, sessions, stageApp } from "./testing.ts";

const AT = "2026-11-25T10:00:00.123Z";
const doc: ResourceRef = { id: "d1", tenantId: "t1", title: "Doc" };

const writePlan = compileRoutePlan({
  method: "POST",
  pattern: "/t/:tenant/docs/:id",
  public: false,
  auth: { required: true },
  resources: [{ type: "doc", idParam: "id", tenantParam: "tenant", mustExist: true }],
  action: "docs:write",
  audit: "doc.write",
});

function quietLog() {
  const error = vi.fn();
  const log: Logger = { log: vi.fn(), debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error, enabled: () => true, child: () => log };
  return { log, error };
}

/** Stands in for authenticate + resources: the actor and the resources a request resolved to. */
const signedIn = (resources: Record<string, ResourceRef | null> = { doc }): Stage => async (c, next) => {
  const state = stateOf(c);
  state.actor = alice;
  state.resources = resources;
  await next();
};

interface Options {
  plan?: RoutePlan;
  sink?: AuditSink;
  before?: Stage[];
  handler?: HostHandler;
  auth?: AuthServices;
  log?: Logger;
}

/** request -> audit -> body -> `before` -> handler (a host handler). */
function app(options: Options = {}) {
  const plan = options.plan ?? writePlan;
  const sink = options.sink ?? collecting();
  const deps: StageDeps = { auth: options.auth ?? {}, sessions, maxBodyBytes: 1024, dev: false, log: options.log, now: () => new Date(AT) };
  return stageApp(compileRoutePlan({ method: plan.method, pattern: plan.pattern, public: true }).parsed.path, [
    requestStage(plan, deps),
    auditStage({ ...plan, audit: plan.audit! }, sink, deps),
    bodyStage(deps),
    ...(options.before ?? []),
    handlerStage(plan, { kind: "host", handler: options.handler ?? (() => new Response("done")) }, deps),
  ]);
}

const write: RequestInit = { method: "POST", body: '{"text":"hi"}', headers: { "content-type": "application/json" } };

describe("auditStage", () => {
  it("records allowed, then completed with the status, the actor, the resources and the time", async () => {
    const sink = collecting();
    const res = await app({ sink, before: [signedIn()] })("/t/t1/docs/d1", write);
    expect(res.status).toBe(200);
    const base = {
      event: "doc.write",
      routeName: "POST /t/:tenant/docs/:id",
      method: "POST",
      pattern: "/t/:tenant/docs/:id",
      action: "docs:write",
      actor: alice,
      resource: doc,
      resources: { doc },
      requestId: "r1",
      at: AT,
    };
    expect(sink.events).toEqual([
      { ...base, outcome: "allowed" },
      { ...base, outcome: "completed", statusCode: 200 },
    ]);
  });

  it("records a handler's own 4xx answer as completed with its status", async () => {
    const sink = collecting();
    await app({ sink, before: [signedIn()], handler: () => new Response("no", { status: 409 }) })("/t/t1/docs/d1", write);
    expect(sink.events.map((e) => [e.outcome, e.statusCode, e.reason])).toEqual([
      ["allowed", undefined, undefined],
      ["completed", 409, undefined],
    ]);
  });

  it("records a throwing handler, or one answering 5xx, as allowed then failed", async () => {
    const thrown = collecting();
    const res = await app({
      sink: thrown,
      before: [signedIn()],
      handler: () => {
        throw new Error("broken");
      },
    })("/t/t1/docs/d1", write);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: unknown }).error).toEqual({ code: "INTERNAL", message: "internal error" });
    expect(thrown.events.map((e) => [e.outcome, e.statusCode, e.reason])).toEqual([
      ["allowed", undefined, undefined],
      ["failed", 500, "handler_error"],
    ]);

    const answered = collecting();
    await app({ sink: answered, before: [signedIn()], handler: () => new Response("down", { status: 503 }) })("/t/t1/docs/d1", write);
    expect(answered.events.map((e) => [e.outcome, e.statusCode, e.reason])).toEqual([
      ["allowed", undefined, undefined],
      ["failed", 503, "handler_error"],
    ]);
  });

  it("records a stage's refusal once, as denied with its reason and status, with the actor known so far", async () => {
    const sink = collecting();
    let ran = false;
    const refuse: Stage = async () => {
      throw new HostReply(403, "FORBIDDEN", "not allowed", {}, "not in group");
    };
    const res = await app({
      sink,
      before: [signedIn(), refuse],
      handler: () => {
        ran = true;
        return new Response("never");
      },
    })("/t/t1/docs/d1", write);
    expect(res.status).toBe(403);
    expect(ran).toBe(false);
    expect(sink.events).toHaveLength(1);
    expect(sink.events[0]).toMatchObject({ outcome: "denied", reason: "not in group", statusCode: 403, actor: alice, resource: doc });
  });

  it.each(
    [
      ["bad JSON", { ...write, body: "{" }, 400, "invalid_json"],
      ["deep JSON", { ...write, body: "[".repeat(65) + "]".repeat(65) }, 400, "json_too_deep"],
      ["a body over the limit", { ...write, body: "x".repeat(1025) }, 413, "body_too_large"],
    ] as const,
  )("records %s as denied before anyone is known", async (_what, init, status, reason) => {
    const sink = collecting();
    const res = await app({ sink, before: [signedIn()] })("/t/t1/docs/d1", init);
    expect(res.status).toBe(status);
    expect(sink.events).toEqual([
      {
        event: "doc.write",
        outcome: "denied",
        reason,
        statusCode: status,
        routeName: "POST /t/:tenant/docs/:id",
        method: "POST",
        pattern: "/t/:tenant/docs/:id",
        action: "docs:write",
        resources: {},
        requestId: "r1",
        at: AT,
      },
    ]);
  });

  it("records invalid credentials with the authenticator's code, and a sign-in redirect as denied no_credentials", async () => {
    const invalid = collecting();
    const authenticator = {
      authenticate: () => {
        throw new AuthenticationError("invalid_token", "the token has expired");
      },
    };
    const res = await app({ sink: invalid, before: [authenticateStage(writePlan, authenticator)] })("/t/t1/docs/d1", write);
    expect(res.status).toBe(401);
    expect(invalid.events.map((e) => [e.outcome, e.reason, e.statusCode])).toEqual([["denied", "invalid_token", 401]]);

    const readPlan = compileRoutePlan({ method: "GET", pattern: "/page", public: false, auth: { required: true }, action: "page:read", audit: "page.read" });
    const redirected = collecting();
    const page = await app({
      plan: readPlan,
      sink: redirected,
      before: [authenticateStage(readPlan, { authenticate: () => null, signInUrl: () => "/auth/login?return_to=%2Fpage" })],
    })("/page", {
      headers: { accept: "text/html" },
    });
    expect(page.status).toBe(302);
    expect(redirected.events.map((e) => [e.outcome, e.reason, e.statusCode])).toEqual([["denied", "no_credentials", 302]]);
  });

  it("records a route failing closed as denied service_missing (500)", async () => {
    const sink = collecting();
    const res = await app({ sink, before: [failClosedStage(writePlan, {})] })("/t/t1/docs/d1", write);
    expect(res.status).toBe(500);
    expect(sink.events.map((e) => [e.outcome, e.reason, e.statusCode])).toEqual([["denied", "service_missing", 500]]);
  });

  it("names no resource when the first one is null, and none at all for a route without resources or action", async () => {
    const optional = compileRoutePlan({
      method: "GET",
      pattern: "/t/:tenant/docs/:id",
      public: false,
      auth: { required: true },
      resources: [{ type: "doc", idParam: "id" }],
      action: "docs:read",
      audit: "doc.read",
    });
    const sink = collecting();
    await app({ plan: optional, sink, before: [signedIn({ doc: null })] })("/t/t1/docs/d9");
    expect(sink.events[1]).toMatchObject({ outcome: "completed", resources: { doc: null } });
    expect(sink.events[1]).not.toHaveProperty("resource");

    const open = compileRoutePlan({ method: "GET", pattern: "/public", public: true, audit: "public.read" });
    const bare = collecting();
    await app({ plan: open, sink: bare })("/public");
    expect(bare.events.map((e) => Object.keys(e).sort())).toEqual([
      ["at", "event", "method", "outcome", "pattern", "requestId", "routeName"],
      ["at", "event", "method", "outcome", "pattern", "requestId", "routeName", "statusCode"],
    ]);
  });

  it("answers only after every write has finished", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stored: string[] = [];
    const sink: AuditSink = {
      async record(e) {
        await gate;
        stored.push(e.outcome);
      },
    };
    let answered = false;
    const pending = app({ sink, before: [signedIn()] })("/t/t1/docs/d1", write).then((res) => {
      answered = true;
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(answered).toBe(false);
    release();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(stored).toEqual(["allowed", "completed"]);
  });

  it("logs a failing sink and answers as if it had not failed", async () => {
    const { log, error } = quietLog();
    const sink: AuditSink = {
      record(e) {
        if (e.outcome === "allowed") throw new Error("disk full");
        return Promise.reject(new Error("database gone"));
      },
    };
    const res = await app({ sink, log, before: [signedIn()] })("/t/t1/docs/d1", write);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("done");
    expect(error.mock.calls).toEqual([
      ["audit sink failed", { request_id: "r1", error: "Error: disk full" }],
      ["audit sink failed", { request_id: "r1", error: "Error: database gone" }],
    ]);
  });

  // A failure before authorization that is not a refusal (an authenticator whose key server is
  // down, a resolver whose database is, an authorizer that throws) is the host's: `failed`, 500.
  it("records a 500 from a stage before authorization (a throwing resolver) as failed", async () => {
    const sink = collecting();
    const crash: Stage = async () => {
      throw new TypeError("database connection reset");
    };
    const res = await app({ sink, before: [signedIn(), crash] })("/t/t1/docs/d1", write);
    expect(res.status).toBe(500);
    expect(sink.events.map((e) => [e.outcome, e.statusCode])).toEqual([["failed", 500]]);
  });
});
