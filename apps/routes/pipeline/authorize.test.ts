/** The authorize stage: the authorizer decides on actor, action and resources; a denial is 403. */
import { describe, expect, it, vi } from "vitest";
import type { Logger } from "#lib/log";
import { policyAuthorizer } from "../auth/policy.ts";
import { scopeAuthorizer } from "../auth/scope-authorizer.ts";
import { compileRoutePlan, type RoutePlan } from "../core/plan.ts";
import type { Actor, AuthorizationDecision, AuthorizationInput, Authorizer, ResourceRef } from "../core/services.ts";
import { auditStage } from "./audit.ts";
import { authorizeStage } from "./authorize.ts";
import { bodyStage } from "./body.ts";
import { requestStage } from "./request.ts";
import { type Stage, stateOf } from "./state.ts";
import { alice, collecting, DOCS, sessions, stageApp } from "./testing.ts";

const folder: ResourceRef = { id: "f1", tenantId: "t1" };
const doc: ResourceRef = { id: "d1", tenantId: "t2", owner: "bob" };

const withResources = compileRoutePlan({
  method: "POST",
  pattern: "/t/:tenant/docs/:id",
  public: false,
  auth: { required: true },
  resources: [
    { type: "folder", idParam: "tenant" },
    { type: "doc", idParam: "id" },
  ],
  action: "docs:write",
  audit: "docs.write",
});
const bare = compileRoutePlan({
  method: "POST",
  pattern: "/t/:tenant/docs/:id",
  public: false,
  auth: { required: false },
  action: "docs:create",
  audit: "docs.create",
});

function authorizer(
  decide: (input: AuthorizationInput) => AuthorizationDecision | Promise<AuthorizationDecision>,
): Authorizer & { inputs: AuthorizationInput[] } {
  const inputs: AuthorizationInput[] = [];
  return {
    inputs,
    authorize(input) {
      inputs.push(input);
      return decide(input);
    },
  };
}

/** request -> audit -> body -> (actor and resources as given) -> authorize -> a handler that counts its calls. */
function app(
  plan: RoutePlan,
  authorize: Authorizer,
  known: { actor: Actor | null; resources: Record<string, ResourceRef | null> },
  deps?: Parameters<typeof authorizeStage>[2],
) {
  const sink = collecting();
  let handled = 0;
  const resolved: Stage = async (c, next) => {
    const state = stateOf(c);
    state.actor = known.actor;
    state.resources = known.resources;
    await next();
  };
  const served = stageApp(DOCS, [
    requestStage(plan, { sessions }),
    auditStage({ ...plan, audit: plan.audit! }, sink, { now: () => new Date() }),
    bodyStage({ maxBodyBytes: 1024 }),
    resolved,
    authorizeStage(plan, authorize, deps),
    async (c) => {
      handled++;
      return c.text("written");
    },
  ]);
  const fetch = () => served("/t/t1/docs/d1", { method: "POST" });
  return { fetch, events: sink.events, handled: () => handled };
}

describe("authorizeStage", () => {
  it("asks with the actor, the action, the first declared resource and all of them, and lets an allowed request on", async () => {
    const authorize = authorizer(() => ({ allow: true }));
    const { fetch, events, handled } = app(withResources, authorize, { actor: alice, resources: { folder, doc } });
    const res = await fetch();
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("written");
    expect(handled()).toBe(1);
    expect(authorize.inputs).toEqual([{ actor: alice, action: "docs:write", resource: folder, resources: { folder, doc }, route: withResources }]);
    // Passing authorization records nothing itself: the handler stage records `allowed` (handler.test.ts).
    expect(events).toEqual([]);
  });

  it("answers a denial 403 FORBIDDEN without its reason, which only the audit gets", async () => {
    const { fetch, events, handled } = app(withResources, authorizer(() => ({ allow: false, reason: "tenant_mismatch" })), {
      actor: alice,
      resources: { folder, doc },
    });
    const res = await fetch();
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: { code: "FORBIDDEN", message: "not allowed" } });
    expect(text).not.toContain("tenant_mismatch");
    expect(handled()).toBe(0);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      outcome: "denied",
      reason: "tenant_mismatch",
      statusCode: 403,
      actor: alice,
      resource: folder,
      resources: { folder, doc },
    });
  });

  it("says why in the log always, and on the answer in dev mode only: the action, the rule, what it looked at", async () => {
    const info = vi.fn();
    const log = { log: vi.fn(), debug: vi.fn(), info, warn: vi.fn(), error: vi.fn(), enabled: () => true, child: () => log } as Logger;
    const reader: Actor = { ...alice, claims: { sub: "alice", scope: "openid profile", roles: ["user"] } };
    const quiet = await app(bare, scopeAuthorizer(), { actor: reader, resources: {} }, { dev: false, log }).fetch();
    expect(await quiet.json()).toEqual({ error: { code: "FORBIDDEN", message: "not allowed" } });
    const scopeWhy =
      'action "docs:create" refused (not_granted:docs:create): no policy is loaded (--policy-file), so the token itself must grant "docs:create" (or "docs:*", or "*"), and its scope "openid profile", roles [user], groups (none), permissions (none) do not';
    expect(info).toHaveBeenCalledWith(
      "authorization denied",
      expect.objectContaining({ action: "docs:create", reason: "not_granted:docs:create", why: scopeWhy }),
    );
    const dev = await app(bare, scopeAuthorizer(), { actor: reader, resources: {} }, { dev: true, log }).fetch();
    expect((await dev.json()).error.message).toBe(`not allowed: ${scopeWhy}`);
    const policy = policyAuthorizer({
      roles: { claims: ["roles", "groups"] },
      rules: [{ roles: ["admin"], allow: ["*"] }],
      tenants: { match: true, claims: ["tenant"] },
    });
    const byPolicy = await app(bare, policy, { actor: reader, resources: {} }, { dev: true, log }).fetch();
    expect((await byPolicy.json()).error.message).toBe(
      'not allowed: action "docs:create" refused (no_rule_allows:docs:create): no rule of the policy allows "docs:create" to the roles [user] (from the claims roles, groups); its rules: roles [admin] allow [*]',
    );
    const other = await app(withResources, policy, { actor: reader, resources: { folder, doc } }, { dev: true }).fetch();
    expect((await other.json()).error.message).toBe(
      'not allowed: action "docs:write" refused (tenant_mismatch): the doc d1 belongs to tenant "t2", and the actor\'s tenants are [t1]',
    );
  });

  it("audits a denial without a reason as denied", async () => {
    const { fetch, events } = app(withResources, authorizer(() => ({ allow: false })), { actor: alice, resources: { folder, doc } });
    expect((await fetch()).status).toBe(403);
    expect(events.map((e) => [e.outcome, e.reason])).toEqual([["denied", "denied"]]);
  });

  it("awaits an asynchronous decision (a pending denial is not an allow)", async () => {
    const { fetch, handled } = app(withResources, authorizer(async () => ({ allow: false })), { actor: alice, resources: { folder, doc } });
    expect((await fetch()).status).toBe(403);
    expect(handled()).toBe(0);
  });

  it("passes null for a missing first resource, and for a route that declares none", async () => {
    const first = authorizer(() => ({ allow: true }));
    await app(withResources, first, { actor: alice, resources: { folder: null, doc } }).fetch();
    expect(first.inputs[0]).toMatchObject({ resource: null, resources: { folder: null, doc } });

    const none = authorizer(() => ({ allow: true }));
    await app(bare, none, { actor: null, resources: {} }).fetch();
    expect(none.inputs).toEqual([{ actor: null, action: "docs:create", resource: null, resources: {}, route: bare }]);
  });

  it("answers an authorizer that throws 500 INTERNAL, and the handler never runs", async () => {
    const { fetch, handled } = app(
      withResources,
      authorizer(() => {
        throw new Error("policy engine down");
      }),
      { actor: alice, resources: { folder, doc } },
    );
    const res = await fetch();
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "INTERNAL", message: "internal error" } });
    expect(handled()).toBe(0);
  });
});
