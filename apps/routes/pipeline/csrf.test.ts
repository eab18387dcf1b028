/** The CSRF stage: unsafe methods must carry a valid token (403); safe ones are not checked. */
import { describe, expect, it } from "vitest";
import { compileRoutePlan } from "../core/plan.ts";
import type { CsrfProtector, PipelineRequest } from "../core/services.ts";
import { auditStage } from "./audit.ts";
import { bodyStage } from "./body.ts";
import { csrfStage } from "./csrf.ts";
import { requestStage } from "./request.ts";
import { collecting, errorOf, sessions, stageApp } from "./testing.ts";

const plan = compileRoutePlan({
  method: "ALL",
  pattern: "/notes/:id",
  public: false,
  auth: { required: true },
  csrf: true,
  action: "notes:write",
  audit: "notes.write",
});

/** A protector that accepts the header `x-csrf-token: good` or a `_csrf: good` body field. */
function protector(verify?: CsrfProtector["verify"]): CsrfProtector & { seen: PipelineRequest[] } {
  const seen: PipelineRequest[] = [];
  return {
    seen,
    verify(req) {
      seen.push(req);
      if (verify) return verify(req);
      const body = req.script.body as Record<string, unknown> | null;
      return req.script.headers["x-csrf-token"] === "good" || (typeof body === "object" && body !== null && body._csrf === "good");
    },
  };
}

/** request -> audit -> body -> CSRF -> a handler that counts its calls. */
function app(csrf: CsrfProtector) {
  const sink = collecting();
  let handled = 0;
  const served = stageApp("/notes/:id", [
    requestStage(plan, { sessions }),
    auditStage({ ...plan, audit: plan.audit! }, sink, { now: () => new Date() }),
    bodyStage({ maxBodyBytes: 1024 }),
    csrfStage(csrf),
    async (c) => {
      handled++;
      return c.text("changed");
    },
  ]);
  const fetch = (init: RequestInit) => served("/notes/1", init);
  return { fetch, events: sink.events, handled: () => handled };
}

describe("csrfStage", () => {
  it.each(["GET", "HEAD", "OPTIONS"])("does not check %s (the protector is not even asked)", async (method) => {
    const csrf = protector(() => false);
    const { fetch, handled } = app(csrf);
    const res = await fetch({ method });
    expect(res.status).toBe(200);
    expect(handled()).toBe(1);
    expect(csrf.seen).toHaveLength(0);
  });

  it.each(["POST", "PUT", "DELETE", "PATCH"])("refuses %s without a valid token: 403 CSRF_FAILED, the handler never runs, audited as csrf", async (method) => {
    const csrf = protector();
    const { fetch, events, handled } = app(csrf);
    for (const headers of [{}, { "x-csrf-token": "forged" }] as Record<string, string>[]) {
      const res = await fetch({ method, headers });
      expect(res.status).toBe(403);
      expect(await errorOf(res)).toEqual({ code: "CSRF_FAILED", message: "the CSRF token is missing or wrong" });
    }
    expect(handled()).toBe(0);
    expect(csrf.seen).toHaveLength(2);
    expect(events.map((e) => [e.outcome, e.reason, e.statusCode])).toEqual([
      ["denied", "csrf", 403],
      ["denied", "csrf", 403],
    ]);
  });

  it.each(["POST", "PUT", "DELETE", "PATCH"])("lets %s with a valid token through", async (method) => {
    const csrf = protector();
    const { fetch, handled } = app(csrf);
    const res = await fetch({ method, headers: { "x-csrf-token": "good" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("changed");
    expect(handled()).toBe(1);
    expect(csrf.seen).toHaveLength(1);
  });

  it("checks a lower-case method as unsafe too (a method name is case-sensitive, only some are normalised)", async () => {
    const csrf = protector();
    const { fetch, handled } = app(csrf);
    const res = await fetch({ method: "patch" });
    expect(res.status).toBe(403);
    expect(handled()).toBe(0);
  });

  it("gives the protector the parsed body (a form's _csrf field)", async () => {
    const csrf = protector();
    const { fetch, handled } = app(csrf);
    const res = await fetch({ method: "POST", body: "_csrf=good&text=hi", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(200);
    expect(handled()).toBe(1);
    expect(csrf.seen[0]!.script.body).toEqual({ _csrf: "good", text: "hi" });
  });

  it("awaits an asynchronous verdict (a pending false is not a pass)", async () => {
    const { fetch, handled } = app(protector(async () => false));
    expect((await fetch({ method: "POST" })).status).toBe(403);
    expect(handled()).toBe(0);
    const ok = app(protector(async () => true));
    expect((await ok.fetch({ method: "POST" })).status).toBe(200);
  });
});
