/** Failing closed: a route that needs a service the host was not given answers 500, never opens. */
import { describe, expect, it } from "vitest";
import { compileRoutePlan, type RoutePlan } from "../core/plan.ts";
import type { AuthServices } from "../core/services.ts";
import { bodyStage } from "./body.ts";
import { failClosedStage, mayMissServices, missingServices } from "./fail-closed.ts";
import { requestStage } from "./request.ts";
import { DOCS, errorOf, publicDocs, sessions, stageApp } from "./testing.ts";

const ALL: Required<Pick<AuthServices, "authenticator" | "authorizer" | "resources" | "csrf">> = {
  authenticator: { authenticate: () => null },
  authorizer: { authorize: () => ({ allow: true }) },
  resources: { resolve: () => null },
  csrf: { verify: () => true },
};

const full = compileRoutePlan({
  method: "ALL",
  pattern: DOCS,
  public: false,
  auth: { required: true },
  resources: [{ type: "doc", idParam: "id" }],
  csrf: true,
  action: "docs:write",
});
const open = publicDocs;
const optional = compileRoutePlan({ method: "ALL", pattern: DOCS, public: false, auth: { required: false }, action: "docs:read" });

/** request -> body -> fail closed -> a handler that counts its calls. */
function app(plan: RoutePlan, auth: AuthServices, dev: boolean) {
  let handled = 0;
  const served = stageApp(
    DOCS,
    [requestStage(plan, { sessions }), bodyStage({ maxBodyBytes: 1024 }), failClosedStage(plan, auth), async (c) => {
      handled++;
      return c.text("handled");
    }],
    { dev },
  );
  const fetch = (method: string) => served("/t/t1/docs/d1", { method });
  return { fetch, handled: () => handled };
}

describe("missingServices", () => {
  it("names what an authenticated route with resources and CSRF lacks, for an unsafe method", () => {
    expect(missingServices(full, {}, "POST")).toEqual(["authenticator", "authorizer", "resource resolver", "CSRF protector"]);
    expect(missingServices(full, { ...ALL, authorizer: undefined }, "DELETE")).toEqual(["authorizer"]);
    expect(missingServices(full, { ...ALL, resources: undefined }, "PUT")).toEqual(["resource resolver"]);
    expect(missingServices(full, ALL, "POST")).toEqual([]);
  });

  it("does not need a CSRF protector for a safe method", () => {
    for (const method of ["GET", "HEAD", "OPTIONS", "TRACE"]) expect(missingServices(full, { ...ALL, csrf: undefined }, method)).toEqual([]);
    expect(missingServices(full, { ...ALL, csrf: undefined }, "PATCH")).toEqual(["CSRF protector"]);
  });

  it("needs an authenticator and an authorizer even when the actor is optional, and nothing for a public route", () => {
    expect(missingServices(optional, {}, "GET")).toEqual(["authenticator", "authorizer"]);
    expect(missingServices(open, {}, "POST")).toEqual([]);
  });

  it("mayMissServices: whether any method could find one missing (a CSRF protector counts)", () => {
    expect(mayMissServices(full, ALL)).toBe(false);
    expect(mayMissServices(full, { ...ALL, csrf: undefined })).toBe(true);
    expect(mayMissServices(open, {})).toBe(false);
    expect(mayMissServices(optional, { authenticator: ALL.authenticator })).toBe(true);
  });
});

describe("failClosedStage", () => {
  it("answers 500 SERVICE_MISSING with the missing names in dev mode, and the handler never runs", async () => {
    const { fetch, handled } = app(full, { authenticator: ALL.authenticator }, true);
    const res = await fetch("POST");
    expect(res.status).toBe(500);
    expect(await errorOf(res)).toEqual({
      code: "SERVICE_MISSING",
      message: "route ALL /t/:tenant/docs/:id needs host services that are not configured: authorizer, resource resolver, CSRF protector",
    });
    expect(handled()).toBe(0);
  });

  it("shows nothing of the configuration outside dev mode", async () => {
    const { fetch, handled } = app(full, {}, false);
    const res = await fetch("DELETE");
    expect(res.status).toBe(500);
    expect(await errorOf(res)).toEqual({ code: "INTERNAL", message: "internal error" });
    expect(handled()).toBe(0);
  });

  it("lets a safe request through a CSRF route without a protector, and refuses an unsafe one", async () => {
    const { fetch, handled } = app(full, { ...ALL, csrf: undefined }, true);
    const get = await fetch("GET");
    expect(get.status).toBe(200);
    expect(await get.text()).toBe("handled");
    const post = await fetch("POST");
    expect(post.status).toBe(500);
    expect((await errorOf(post)).message).toMatch(/: CSRF protector$/);
    expect(handled()).toBe(1);
  });

  it("passes when everything the route needs is there", async () => {
    const { fetch, handled } = app(full, ALL, true);
    expect((await fetch("PUT")).status).toBe(200);
    expect(handled()).toBe(1);
  });
});
