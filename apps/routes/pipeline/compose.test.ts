/** Which stages a route gets from its plan, in which order, and that they run as composed. */
import { describe, expect, it, vi } from "vitest";
import { compileRoutePlan, type RoutePlan, type RoutePlanInput } from "../core/plan.ts";
import type { Actor, AuditEvent, AuthServices } from "../core/services.ts";
import { stagesFor } from "./compose.ts";
import type { Target } from "./handler.ts";
import type { Stage, StageDeps } from "./state.ts";
import { DOCS, sessions, stageApp } from "./testing.ts";

// Every stage factory, wrapped so a stage it makes can be named: the order stagesFor chose.
const { named, tag } = vi.hoisted(() => {
  const named = new Map<unknown, string>();
  const tag = <F extends (...args: never[]) => unknown>(name: string, make: F) => (...args: Parameters<F>) => {
    const stage = make(...args);
    named.set(stage, name);
    return stage;
  };
  return { named, tag };
});
vi.mock("./request.ts", async (original) => {
  const m = await original<typeof import("./request.ts")>();
  return { ...m, requestStage: tag("request", m.requestStage) };
});
vi.mock("./audit.ts", async (original) => {
  const m = await original<typeof import("./audit.ts")>();
  return { ...m, auditStage: tag("audit", m.auditStage) };
});
vi.mock("./body.ts", async (original) => {
  const m = await original<typeof import("./body.ts")>();
  return { ...m, bodyStage: tag("body", m.bodyStage) };
});
vi.mock("./fail-closed.ts", async (original) => {
  const m = await original<typeof import("./fail-closed.ts")>();
  return { ...m, failClosedStage: tag("fail-closed", m.failClosedStage) };
});
vi.mock("./authenticate.ts", async (original) => {
  const m = await original<typeof import("./authenticate.ts")>();
  return { ...m, authenticateStage: tag("authenticate", m.authenticateStage) };
});
vi.mock("./csrf.ts", async (original) => {
  const m = await original<typeof import("./csrf.ts")>();
  return { ...m, csrfStage: tag("csrf", m.csrfStage) };
});
vi.mock("./resources.ts", async (original) => {
  const m = await original<typeof import("./resources.ts")>();
  return { ...m, resourcesStage: tag("resources", m.resourcesStage) };
});
vi.mock("./authorize.ts", async (original) => {
  const m = await original<typeof import("./authorize.ts")>();
  return { ...m, authorizeStage: tag("authorize", m.authorizeStage) };
});
vi.mock("./handler.ts", async (original) => {
  const m = await original<typeof import("./handler.ts")>();
  return { ...m, handlerStage: tag("handler", m.handlerStage) };
});

const alice: Actor = { id: "alice", kind: "user" };

/** Every service, each noting that it was asked. */
function services() {
  const asked: string[] = [];
  const audit: AuditEvent[] = [];
  const auth: Required<AuthServices> = {
    authenticator: { authenticate: () => (asked.push("authenticate"), alice) },
    csrf: { verify: () => (asked.push("csrf"), true), token: () => (asked.push("token"), "t") },
    resources: { resolve: (q) => (asked.push(`resolve ${q.type}`), { id: q.id ?? "x", tenantId: "t1" }) },
    authorizer: { authorize: () => (asked.push("authorize"), { allow: true }) },
    audit: { record: (e) => void audit.push(e) },
  };
  return { auth, asked, audit };
}

const deps = (auth: AuthServices): StageDeps => ({ auth, sessions, maxBodyBytes: 1024, dev: true, now: () => new Date() });
const target: Target = { kind: "host", handler: () => new Response("handled") };
const plan = (input: Omit<RoutePlanInput, "method" | "pattern">) => compileRoutePlan({ method: "POST", pattern: DOCS, ...input });

const PUBLIC = { public: true };
const PUBLIC_AUDITED = { public: true, audit: "public.read" };
const FULL = { public: false, auth: { required: true }, resources: [{ type: "doc", idParam: "id" }], csrf: true, action: "docs:write", audit: "doc.write" };

const namesOf = (stages: Stage[]) => stages.map((s) => named.get(s) ?? "?");

/** The composed stages as a Hono route, the way the host registers them. */
function serve(p: RoutePlan, auth: AuthServices) {
  const fetch = stageApp(DOCS, stagesFor(p, target, deps(auth)), { method: p.method, dev: true });
  return (init: RequestInit = { method: "POST" }) => fetch("/t/t1/docs/d1", init);
}

describe("stagesFor", () => {
  it("gives a public route only the request, body and handler stages, even with every service configured", async () => {
    const { auth, asked } = services();
    expect(namesOf(stagesFor(plan(PUBLIC), target, deps(auth)))).toEqual(["request", "body", "handler"]);
    const res = await serve(plan(PUBLIC), auth)();
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("handled");
    // Not even the CSRF token is made for a public route.
    expect(asked).toEqual([]);
  });

  it("adds the audit stage only when the plan audits and the host has a sink", async () => {
    const { auth, audit } = services();
    expect(namesOf(stagesFor(plan(PUBLIC_AUDITED), target, deps(auth)))).toEqual(["request", "audit", "body", "handler"]);
    expect(namesOf(stagesFor(plan(PUBLIC_AUDITED), target, deps({ ...auth, audit: undefined })))).toEqual(["request", "body", "handler"]);
    expect(namesOf(stagesFor(plan(PUBLIC), target, deps(auth)))).toEqual(["request", "body", "handler"]);

    await serve(plan(PUBLIC_AUDITED), auth)();
    expect(audit.map((e) => [e.event, e.outcome])).toEqual([
      ["public.read", "allowed"],
      ["public.read", "completed"],
    ]);
  });

  it("composes a full plan in the spec's order, without fail-closed when every service is there", async () => {
    const { auth, asked, audit } = services();
    expect(namesOf(stagesFor(plan(FULL), target, deps(auth)))).toEqual([
      "request",
      "audit",
      "body",
      "authenticate",
      "csrf",
      "resources",
      "authorize",
      "handler",
    ]);
    const res = await serve(plan(FULL), auth)();
    expect(res.status).toBe(200);
    expect(asked).toEqual(["authenticate", "csrf", "resolve doc", "authorize", "token"]);
    expect(audit.map((e) => e.outcome)).toEqual(["allowed", "completed"]);
  });

  it("leaves out what the plan does not declare", () => {
    const { auth } = services();
    const minimal = plan({ public: false, auth: { required: true }, action: "docs:write" });
    expect(namesOf(stagesFor(minimal, target, deps(auth)))).toEqual(["request", "body", "authenticate", "authorize", "handler"]);
  });

  it.each(
    [
      ["authenticator", ["request", "audit", "body", "fail-closed", "csrf", "resources", "authorize", "handler"]],
      ["authorizer", ["request", "audit", "body", "fail-closed", "authenticate", "csrf", "resources", "handler"]],
      ["resources", ["request", "audit", "body", "fail-closed", "authenticate", "csrf", "authorize", "handler"]],
      ["csrf", ["request", "audit", "body", "fail-closed", "authenticate", "resources", "authorize", "handler"]],
    ] as const,
  )("adds fail-closed after the body when the %s is missing, and nothing else runs", async (missing, stages) => {
    const { auth, asked, audit } = services();
    const partial: AuthServices = { ...auth, [missing]: undefined };
    expect(namesOf(stagesFor(plan(FULL), target, deps(partial)))).toEqual(stages);
    const res = await serve(plan(FULL), partial)();
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("SERVICE_MISSING");
    expect(asked).toEqual([]);
    expect(audit.map((e) => [e.outcome, e.reason])).toEqual([["denied", "service_missing"]]);
  });

  it("answers bad JSON 400 before failing closed (the body stage comes first)", async () => {
    const res = await serve(plan(FULL), {})({ method: "POST", body: "{", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INVALID_JSON");
  });

  it("lets a safe request through a CSRF route whose host has no CSRF protector", async () => {
    const { auth, asked } = services();
    const readPlan = compileRoutePlan({ method: "GET", pattern: "/t/:tenant/docs/:id", ...FULL });
    const res = await serve(readPlan, { ...auth, csrf: undefined })({ method: "GET" });
    expect(res.status).toBe(200);
    expect(asked).toEqual(["authenticate", "resolve doc", "authorize"]);
  });
});
