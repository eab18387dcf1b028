/** The resources stage: each declared resource resolved in order; a missing `.mustExist()` one is 404. */
import { describe, expect, it } from "vitest";
import { compileRoutePlan, type RoutePlan } from "../core/plan.ts";
import { ResourceNotFoundError, type ResourceQuery, type ResourceRef, type ResourceResolver } from "../core/services.ts";
import { auditStage } from "./audit.ts";
import { bodyStage } from "./body.ts";
import { requestStage } from "./request.ts";
import { resourcesStage } from "./resources.ts";
import { type Stage, stateOf } from "./state.ts";
import { alice, collecting, errorOf, sessions, stageApp } from "./testing.ts";

const PATTERN = "/t/:tenant/folders/:folder/docs/:id";

const planWith = (mustExist: boolean) =>
  compileRoutePlan({
    method: "GET",
    pattern: PATTERN,
    public: false,
    auth: { required: true },
    resources: [
      { type: "folder", idParam: "folder", tenantParam: "tenant" },
      { type: "doc", idParam: "id", tenantParam: "tenant", mustExist },
    ],
    action: "docs:read",
    audit: "docs.read",
  });

type Answer = "found" | "null" | "undefined" | "not-found" | "broken";

/** A resolver answering per type, and keeping the queries it was asked. */
function resolver(answers: Record<string, Answer>): ResourceResolver & { queries: ResourceQuery[] } {
  const queries: ResourceQuery[] = [];
  return {
    queries,
    async resolve(q) {
      queries.push(q);
      switch (answers[q.type] ?? "found") {
        case "found":
          return { id: q.id!, tenantId: q.tenantId!, type: q.type };
        case "null":
          return null;
        case "undefined":
          return undefined as unknown as null;
        case "not-found":
          throw new ResourceNotFoundError(`${q.type} ${q.id} is gone`);
        case "broken":
          throw new TypeError("database connection reset");
      }
    },
  };
}

/** request -> audit -> body -> (alice signed in) -> resources -> a handler that shows the resources. */
function app(plan: RoutePlan, resolve: ResourceResolver) {
  const sink = collecting();
  let handled = 0;
  const signedIn: Stage = async (c, next) => {
    stateOf(c).actor = alice;
    await next();
  };
  const served = stageApp(PATTERN, [
    requestStage(plan, { sessions }),
    auditStage({ ...plan, audit: plan.audit! }, sink, { now: () => new Date() }),
    bodyStage({ maxBodyBytes: 1024 }),
    signedIn,
    resourcesStage(plan, resolve),
    async (c) => {
      handled++;
      return c.json(stateOf(c).resources);
    },
  ]);
  const fetch = (path = "/t/t1/folders/f1/docs/d1") => served(path);
  return { fetch, events: sink.events, handled: () => handled };
}
const ref = (type: string, id: string): ResourceRef => ({ id, tenantId: "t1", type });

describe("resourcesStage", () => {
  it("resolves each resource in declared order from the path, with the actor, and hands them on", async () => {
    const plan = planWith(true);
    const resolve = resolver({});
    const { fetch } = app(plan, resolve);
    const res = await fetch();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ folder: ref("folder", "f1"), doc: ref("doc", "d1") });
    expect(resolve.queries).toEqual([
      { type: "folder", id: "f1", tenantId: "t1", actor: alice, route: plan },
      { type: "doc", id: "d1", tenantId: "t1", actor: alice, route: plan },
    ]);
  });

  it("gives the resolver the decoded path parameter", async () => {
    const resolve = resolver({});
    await app(planWith(true), resolve).fetch("/t/t1/folders/f%201/docs/d1");
    expect(resolve.queries[0]!.id).toBe("f 1");
  });

  it.each(
    [
      ["returns null", "null"],
      ["returns nothing", "undefined"],
      ["throws ResourceNotFoundError", "not-found"],
    ] as const,
  )("answers 404 NOT_FOUND when a .mustExist() resolver %s, and the handler never runs", async (_what, answer) => {
    const { fetch, events, handled } = app(planWith(true), resolver({ doc: answer }));
    const res = await fetch();
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toEqual({ code: "NOT_FOUND", message: "doc not found" });
    expect(handled()).toBe(0);
    // Denied with what was resolved before it: the folder, and the doc as null.
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      outcome: "denied",
      reason: "resource_not_found",
      statusCode: 404,
      actor: alice,
      resource: ref("folder", "f1"),
      resources: { folder: ref("folder", "f1"), doc: null },
    });
  });

  it.each(
    [
      ["returns null", "null"],
      ["returns nothing", "undefined"],
      ["throws ResourceNotFoundError", "not-found"],
    ] as const,
  )("hands the handler a null resource when a resolver without .mustExist() %s", async (_what, answer) => {
    const { fetch, handled } = app(planWith(false), resolver({ folder: answer, doc: answer }));
    const res = await fetch();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ folder: null, doc: null });
    expect(handled()).toBe(1);
  });

  it("stops at the first missing .mustExist() resource: later ones are not resolved", async () => {
    const plan = compileRoutePlan({
      method: "GET",
      pattern: PATTERN,
      public: false,
      auth: { required: true },
      resources: [
        { type: "folder", idParam: "folder", mustExist: true },
        { type: "doc", idParam: "id", mustExist: true },
      ],
      action: "docs:read",
      audit: "docs.read",
    });
    const resolve = resolver({ folder: "null" });
    const res = await app(plan, resolve).fetch();
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toEqual({ code: "NOT_FOUND", message: "folder not found" });
    expect(resolve.queries.map((q) => q.type)).toEqual(["folder"]);
  });

  it("answers a resolver that breaks 500 INTERNAL (not a 404), showing nothing of it", async () => {
    for (const mustExist of [true, false]) {
      const { fetch, handled } = app(planWith(mustExist), resolver({ doc: "broken" }));
      const res = await fetch();
      expect(res.status).toBe(500);
      expect(await errorOf(res)).toEqual({ code: "INTERNAL", message: "internal error" });
      expect(handled()).toBe(0);
    }
  });
});
