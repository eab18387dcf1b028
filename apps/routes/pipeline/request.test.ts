/** The request stage: the state the later stages share, the new-session cookie and `no-store`. */
import { describe, expect, it } from "vitest";
import { compileRoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import type { Actor } from "../core/services.ts";
import { requestStage } from "./request.ts";
import { type PipelineState, type Stage, stateOf } from "./state.ts";
import { DOCS, sessions, stageApp } from "./testing.ts";

const plan = compileRoutePlan({ method: "GET", pattern: DOCS, public: true });
const alice: Actor = { id: "alice", kind: "user" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The request stage, then `last` (the stub of everything after it). */
function app(last: Stage) {
  return stageApp(plan.parsed.path, [requestStage(plan, { sessions }), last]);
}

/** A handler that uses the session (as one reading `request.session` does) and shows it. */
const usesSession: Stage = async (c) => {
  const state = stateOf(c);
  state.sessionUsed = true;
  return c.json(state.session);
};

/** The `name=value` part of the response's only Set-Cookie line. */
function onlyCookie(res: Response): string {
  const lines = res.headers.getSetCookie();
  expect(lines).toHaveLength(1);
  return lines[0]!.split(";")[0]!;
}

describe("requestStage", () => {
  it("gives the next stage the request's facts and a state nothing has decided on yet", async () => {
    let seen: PipelineState | undefined;
    const fetch = app(async (c) => {
      seen = stateOf(c);
      return c.text("ok");
    });
    const res = await fetch("/t/t1/docs/a%20b?x=1", { headers: { cookie: "a=1; b=two" } }, { clientAddress: "10.0.0.1" });
    expect(res.status).toBe(200);
    expect(seen).toBeDefined();
    const state = seen!;
    expect(state.plan).toBe(plan);
    expect(state.requestId).toBe("r1");
    expect(state.ip).toBe("10.0.0.1");
    expect(state.url.href).toBe("http://host.test/t/t1/docs/a%20b?x=1");
    expect(state.params).toEqual({ tenant: "t1", id: "a b" });
    expect(state.cookies).toEqual({ a: "1", b: "two" });
    expect(state.session).toEqual({ id: expect.stringMatching(UUID), isNew: true, cookieName: "routes_session" });
    expect(state.sessionUsed).toBe(false);
    expect(state.actor).toBeNull();
    expect(state.resources).toEqual({});
    expect(state.allowed).toBe(false);
    expect(state.pipe).toBeUndefined();
    expect(state.deniedWith).toBeUndefined();
    // Without an audit stage, recording does nothing (and does not throw).
    expect(state.audit("denied", { reason: "x" })).toBeUndefined();
  });

  it("takes the address the entry saw (socket, or its trusted proxy's word), never a header a client wrote", async () => {
    const fetch = app(async (c) => c.text(stateOf(c).ip));
    expect(await (await fetch("/t/t1/docs/1", { headers: { "cf-connecting-ip": "6.6.6.6" } }, { clientAddress: "10.0.0.1" })).text()).toBe("10.0.0.1");
    expect(await (await fetch("/t/t1/docs/1", { headers: { "cf-connecting-ip": "203.0.113.5", "x-forwarded-for": "203.0.113.5" } })).text()).toBe("");
    expect(await (await fetch("/t/t1/docs/1")).text()).toBe("");
  });

  it("sets no cookie for a new session nothing used, and no Cache-Control without an actor", async () => {
    const res = await app(async (c) => c.text("ok"))("/t/t1/docs/1");
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(res.headers.get("cache-control")).toBeNull();
  });

  it("issues a signed HttpOnly SameSite=Lax cookie for a new session that was used, and knows the session when it comes back", async () => {
    const fetch = app(usesSession);
    const first = await fetch("/t/t1/docs/1");
    const session = (await first.json()) as { id: string; isNew: boolean };
    expect(session.isNew).toBe(true);
    const line = first.headers.getSetCookie();
    expect(line).toHaveLength(1);
    expect(line[0]).toMatch(new RegExp(`^routes_session=${session.id}\\.[A-Za-z0-9%]+; Path=/; HttpOnly; SameSite=Lax$`));

    const again = await fetch("/t/t1/docs/1", { headers: { cookie: onlyCookie(first) } });
    expect(await again.json()).toEqual({ id: session.id, isNew: false, cookieName: "routes_session" });
    // A session the client already has is not issued again.
    expect(again.headers.get("set-cookie")).toBeNull();
  });

  it("gives a tampered session cookie a new session, never the id it names", async () => {
    const fetch = app(usesSession);
    const first = await fetch("/t/t1/docs/1");
    const victim = ((await first.json()) as { id: string }).id;
    const [name, value] = onlyCookie(first).split("=") as [string, string];
    const signature = value.slice(value.indexOf(".") + 1);
    const attempts = {
      "a wrong signature": `${name}=${victim}.${signature.replace(/^./, (ch) => (ch === "A" ? "B" : "A"))}`,
      "another id under a valid signature": `${name}=attacker-chosen.${signature}`,
      "a bare id without a signature": `${name}=${victim}`,
      "an empty value": `${name}=`,
    };
    for (const [what, cookie] of Object.entries(attempts)) {
      const res = await fetch("/t/t1/docs/1", { headers: { cookie } });
      const session = (await res.json()) as { id: string; isNew: boolean };
      expect(session.isNew, what).toBe(true);
      expect(session.id, what).toMatch(UUID);
      expect(session.id, what).not.toBe(victim);
      // The new session gets a cookie of its own, for its own id.
      expect(onlyCookie(res), what).toMatch(new RegExp(`^routes_session=${session.id}\\.`));
    }
  });

  it("keeps a session cookie the handler set itself (sign-in renews the id) and adds none beside it", async () => {
    const renewed = app(async (c) => {
      stateOf(c).sessionUsed = true;
      const headers = new Headers();
      headers.append("set-cookie", "theme=dark; Path=/");
      headers.append("set-cookie", "routes_session=renewed.sig; Path=/; HttpOnly");
      return new Response("signed in", { headers });
    });
    expect((await renewed("/t/t1/docs/1")).headers.getSetCookie()).toEqual(["theme=dark; Path=/", "routes_session=renewed.sig; Path=/; HttpOnly"]);

    // Another cookie of the handler's does not count as the session's.
    const other = app(async (c) => {
      stateOf(c).sessionUsed = true;
      return new Response("ok", { headers: { "set-cookie": "xroutes_session=1; Path=/" } });
    });
    const lines = (await other("/t/t1/docs/1")).headers.getSetCookie();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe("xroutes_session=1; Path=/");
    expect(lines[1]).toMatch(/^routes_session=[0-9a-f-]{36}\./);
  });

  it("sets no session cookie on an error answer, even when the session was used", async () => {
    const res = await app(async (c) => {
      stateOf(c).sessionUsed = true;
      throw new HostReply(403, "FORBIDDEN", "not allowed", {}, "denied");
    })("/t/t1/docs/1");
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("marks whatever an actor gets no-store (errors too), unless the answer set its own Cache-Control", async () => {
    const signedIn = (answer: () => Response): Stage => async (c) => {
      stateOf(c).actor = alice;
      return answer();
    };
    const ok = await app(signedIn(() => new Response("mine")))("/t/t1/docs/1");
    expect(ok.headers.get("cache-control")).toBe("no-store");
    expect(await ok.text()).toBe("mine");

    const own = await app(signedIn(() => new Response("cached", { headers: { "cache-control": "private, max-age=60" } })))("/t/t1/docs/1");
    expect(own.headers.get("cache-control")).toBe("private, max-age=60");

    const refused = await app(async (c) => {
      stateOf(c).actor = alice;
      throw new HostReply(404, "NOT_FOUND", "doc not found", {}, "resource_not_found");
    })("/t/t1/docs/1");
    expect(refused.status).toBe(404);
    expect(refused.headers.get("cache-control")).toBe("no-store");
  });

  it("adds the cookie and no-store to an answer with immutable headers (a fetch() answer)", async () => {
    expect(() => Response.redirect("http://host.test/x", 302).headers.set("x", "1")).toThrow(TypeError);
    const res = await app(async (c) => {
      const state = stateOf(c);
      state.actor = alice;
      state.sessionUsed = true;
      return Response.redirect("http://host.test/next", 302);
    })("/t/t1/docs/1");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("http://host.test/next");
    expect(onlyCookie(res)).toMatch(/^routes_session=[0-9a-f-]{36}\./);
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});
