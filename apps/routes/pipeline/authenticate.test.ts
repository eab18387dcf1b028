/** The authenticate stage: the actor, 401 with the challenge, or a browser sent to sign in. */
import { describe, expect, it, vi } from "vitest";
import { compileRoutePlan, type RoutePlan } from "../core/plan.ts";
import { AuthenticationError, type Authenticator, type PipelineRequest } from "../core/services.ts";
import { auditStage } from "./audit.ts";
import { authenticateStage } from "./authenticate.ts";
import { bodyStage } from "./body.ts";
import { requestStage } from "./request.ts";
import { type Stage, stateOf } from "./state.ts";
import { alice, collecting, errorOf, sessions, stageApp } from "./testing.ts";

const required = compileRoutePlan({ method: "ALL", pattern: "/notes/:id", public: false, auth: { required: true }, action: "notes:read", audit: "notes.read" });
const optional = compileRoutePlan({
  method: "ALL",
  pattern: "/notes/:id",
  public: false,
  auth: { required: false },
  action: "notes:read",
  audit: "notes.read",
});
const SIGN_IN = "/auth/login?return_to=%2Fnotes%2F1";

/** A bearer-style authenticator: `Bearer good` is alice, any other token invalid, none no actor. */
function bearer(extra: Partial<Authenticator> = {}): Authenticator & { seen: PipelineRequest[] } {
  const seen: PipelineRequest[] = [];
  return {
    seen,
    authenticate(req) {
      seen.push(req);
      const header = req.script.headers.authorization;
      if (header === undefined) return null;
      if (header === "Bearer good") return alice;
      throw new AuthenticationError("invalid_token", "the token has expired");
    },
    challenge: (_req, err) => `Bearer realm="test"${err ? `, error="${err.code}"` : ""}`,
    ...extra,
  };
}

/** request -> audit -> body -> authenticate -> a handler that shows the actor it was given. */
function app(plan: RoutePlan, authenticator: Authenticator) {
  const sink = collecting();
  let handled = 0;
  const handler: Stage = async (c) => {
    handled++;
    return c.json({ actor: stateOf(c).actor });
  };
  const served = stageApp("/notes/:id", [
    requestStage(plan, { sessions }),
    auditStage({ ...plan, audit: plan.audit! }, sink, { now: () => new Date() }),
    bodyStage({ maxBodyBytes: 1024 }),
    authenticateStage(plan, authenticator),
    handler,
  ]);
  const fetch = (init: RequestInit = {}) => served("/notes/1", init);
  return { fetch, events: sink.events, handled: () => handled };
}

describe("authenticateStage", () => {
  it("hands the authenticator the parsed request and the next stage its actor (answered no-store)", async () => {
    const authenticator = bearer();
    const { fetch, handled } = app(required, authenticator);
    const res = await fetch({ method: "POST", headers: { authorization: "Bearer good", "content-type": "application/json" }, body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ actor: alice });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("www-authenticate")).toBeNull();
    expect(handled()).toBe(1);
    expect(authenticator.seen).toHaveLength(1);
    expect(authenticator.seen[0]!.script.body).toEqual({ a: 1 });
    expect(authenticator.seen[0]!.route).toBe(required);
  });

  it("answers invalid credentials 401 with the challenge for that error, audited with the authenticator's code", async () => {
    const authenticator = bearer();
    const challenge = vi.spyOn(authenticator, "challenge");
    const { fetch, events, handled } = app(required, authenticator);
    const res = await fetch({ headers: { authorization: "Bearer forged" } });
    expect(res.status).toBe(401);
    expect(await errorOf(res)).toEqual({ code: "UNAUTHENTICATED", message: "the token has expired" });
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="test", error="invalid_token"');
    expect(challenge).toHaveBeenCalledTimes(1);
    expect(challenge.mock.calls[0]![1]).toBeInstanceOf(AuthenticationError);
    expect(handled()).toBe(0);
    expect(events.map((e) => [e.outcome, e.reason, e.statusCode])).toEqual([["denied", "invalid_token", 401]]);
  });

  it("refuses invalid credentials on a route whose actor is optional too (present but invalid is never anonymous)", async () => {
    const { fetch, handled } = app(optional, bearer());
    const res = await fetch({ headers: { authorization: "Bearer forged" } });
    expect(res.status).toBe(401);
    expect(handled()).toBe(0);
  });

  it("answers no credentials 401 with the plain challenge, audited as no_credentials", async () => {
    const { fetch, events, handled } = app(required, bearer());
    const res = await fetch({ headers: { accept: "application/json" } });
    expect(res.status).toBe(401);
    expect(await errorOf(res)).toEqual({ code: "UNAUTHENTICATED", message: "this route needs credentials" });
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="test"');
    expect(handled()).toBe(0);
    expect(events.map((e) => [e.outcome, e.reason, e.statusCode])).toEqual([["denied", "no_credentials", 401]]);
  });

  it("sends no WWW-Authenticate when the authenticator has no challenge", async () => {
    const { fetch } = app(required, bearer({ challenge: undefined }));
    const none = await fetch();
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBeNull();
    const invalid = await fetch({ headers: { authorization: "Bearer forged" } });
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get("www-authenticate")).toBeNull();
  });

  it("sends a browser asking for a page to sign in: 302, no-store, and the session cookie the sign-in comes back to", async () => {
    const { fetch, events, handled } = app(required, bearer({ signInUrl: () => SIGN_IN }));
    const res = await fetch({ headers: { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8" } });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(SIGN_IN);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.getSetCookie()).toHaveLength(1);
    expect(res.headers.get("set-cookie")).toMatch(/^routes_session=[0-9a-f-]{36}\.[^;]+; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(handled()).toBe(0);
    expect(events.map((e) => [e.outcome, e.reason, e.statusCode])).toEqual([["denied", "no_credentials", 302]]);
  });

  it.each(
    [
      ["a form post", { method: "POST", headers: { accept: "text/html" } }],
      ["a program", { headers: { accept: "application/json" } }],
      ["a HEAD", { method: "HEAD", headers: { accept: "text/html" } }],
    ] as const,
  )("answers %s without credentials 401, not a redirect", async (_what, init) => {
    const { fetch } = app(required, bearer({ signInUrl: () => SIGN_IN }));
    const res = await fetch(init);
    expect(res.status).toBe(401);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("answers a page request 401 when the authenticator has no sign-in for it", async () => {
    for (const authenticator of [bearer(), bearer({ signInUrl: () => undefined })]) {
      const res = await app(required, authenticator).fetch({ headers: { accept: "text/html" } });
      expect(res.status).toBe(401);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  it("lets a request without credentials through with a null actor when the actor is optional", async () => {
    const { fetch, handled } = app(optional, bearer({ authenticate: () => undefined as unknown as null }));
    const res = await fetch();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ actor: null });
    expect(res.headers.get("cache-control")).toBeNull();
    expect(handled()).toBe(1);
  });

  it("answers an authenticator that breaks (not an AuthenticationError) 500 INTERNAL, not 401, showing nothing", async () => {
    const { fetch, handled } = app(
      required,
      bearer({
        authenticate: () => {
          throw new TypeError("JWKS fetch failed: connect ECONNREFUSED 10.0.0.7:443");
        },
      }),
    );
    const res = await fetch({ headers: { authorization: "Bearer good" } });
    expect(res.status).toBe(500);
    expect(await errorOf(res)).toEqual({ code: "INTERNAL", message: "internal error" });
    expect(res.headers.get("www-authenticate")).toBeNull();
    expect(handled()).toBe(0);
  });
});
