/** `.rateLimit`: where it counts in the pipeline, what a client sees past the limit, and what it is keyed by. */
import { describe, expect, it } from "vitest";
import { compileRoutePlan, RoutePlanError, type RoutePlanInput } from "../core/plan.ts";
import type { Actor, AuditEvent, AuthServices } from "../core/services.ts";
import { memoryRateLimitStore } from "../store/rate-limits.ts";
import { stagesFor } from "./compose.ts";
import type { Target } from "./handler.ts";
import { addressClient } from "./rate-limit.ts";
import { errorOf, sessions, stageApp } from "./testing.ts";

const alice: Actor = { id: "alice", kind: "user" };
const bob: Actor = { id: "bob", kind: "user" };

/** A host route on POST /x with `input`'s plan, every service present; tokens `a1`/`a2` are alice, `b1` bob. */
function route(input: Partial<RoutePlanInput>, options: { now?: () => Date } = {}) {
  const asked: string[] = [];
  const audit: AuditEvent[] = [];
  let clock = Date.parse("2026-11-27T12:00:10.000Z");
  const auth: AuthServices = {
    authenticator: {
      authenticate(req) {
        asked.push("authenticate");
        const token = /^Bearer (\S+)$/.exec(req.script.headers.authorization ?? "")?.[1];
        return token === undefined ? null : token.startsWith("a") ? alice : bob;
      },
    },
    authorizer: { authorize: () => ({ allow: true }) },
    audit: { record: (e) => void audit.push(e) },
  };
  const target: Target = { kind: "host", handler: () => new Response("handled") };
  const plan = compileRoutePlan({ method: "POST", pattern: "/x", public: false, auth: { required: true }, action: "x:do", audit: "x.do", ...input });
  const store = memoryRateLimitStore();
  const now = options.now ?? (() => new Date(clock));
  const stages = stagesFor(plan, target, { auth, sessions, maxBodyBytes: 1024, dev: false, now, rateLimits: store });
  const served = stageApp("/x", stages, { method: "POST" });
  const send = (headers: Record<string, string> = {}, clientAddress = "203.0.113.7", body = "{}") =>
    served("/x", { method: "POST", headers: { "content-type": "application/json", ...headers }, body }, { clientAddress });
  return { send, asked, audit, store, advance: (ms: number) => (clock += ms) };
}

const statuses = async (n: number, send: () => Promise<Response>) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send()).status);
  return out;
};

describe("rate limits in the pipeline", () => {
  it("answers 429 past the limit, with Retry-After, RateLimit and RateLimit-Policy, and the error envelope", async () => {
    const { send, advance } = route({ public: true, auth: undefined, action: undefined, rateLimits: [{ limit: 3, windowSeconds: 60, key: "ip" }] });
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"ip-60s";q=3;w=60');
    // 12:00:10 in a window of 60 s aligned to the epoch: 50 s left.
    expect(first.headers.get("ratelimit")).toBe('"ip-60s";r=2;t=50');
    expect((await send()).headers.get("ratelimit")).toBe('"ip-60s";r=1;t=50');
    expect((await send()).headers.get("ratelimit")).toBe('"ip-60s";r=0;t=50');
    advance(20_000);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.headers.get("ratelimit")).toBe('"ip-60s";r=0;t=30');
    expect(refused.headers.get("ratelimit-policy")).toBe('"ip-60s";q=3;w=60');
    expect(refused.headers.get("content-type")).toBe("application/json");
    expect(await errorOf(refused)).toEqual({ code: "RATE_LIMITED", message: "too many requests: at most 3 every 60 s; try again in 30 s" });
    // The next window starts again.
    advance(30_000);
    expect((await send()).status).toBe(200);
  });

  it("counts by ip before the body is read and before authentication: a flood never reaches the authenticator", async () => {
    const { send, asked } = route({ rateLimits: [{ limit: 2, windowSeconds: 60, key: "ip" }] });
    expect(await statuses(2, () => send())).toEqual([401, 401]);
    expect(asked).toEqual(["authenticate", "authenticate"]);
    const refused = await send({ authorization: "Bearer a1", "content-length": "8" }, "203.0.113.7", "not json");
    expect(refused.status).toBe(429); // not 400: the body was never parsed
    expect(asked).toHaveLength(2);
    // A body left unread on the wire: the connection closes after the answer, as for a 413.
    expect(refused.headers.get("connection")).toBe("close");
    // Another address has its own count.
    expect((await send({ authorization: "Bearer a1" }, "198.51.100.1")).status).toBe(200);
  });

  it("keys by the address the entry saw: forwarding headers a client writes change nothing", async () => {
    const { send } = route({ public: true, auth: undefined, action: undefined, rateLimits: [{ limit: 1, windowSeconds: 60, key: "ip" }] });
    expect((await send()).status).toBe(200);
    const spoofs: Record<string, string>[] = [{ "x-forwarded-for": "192.0.2.1" }, { "cf-connecting-ip": "192.0.2.2" }, { "x-real-ip": "192.0.2.3" }, {
      forwarded: "for=192.0.2.4",
    }];
    for (const spoof of spoofs) {
      expect((await send(spoof)).status).toBe(429);
    }
  });

  it("counts actor, token and session limits after authentication, by what it established", async () => {
    const byActor = route({ rateLimits: [{ limit: 2, windowSeconds: 60, key: "actor" }] });
    // Requests without credentials are 401 and do not use up anyone's allowance.
    expect(await statuses(5, () => byActor.send())).toEqual([401, 401, 401, 401, 401]);
    expect(await statuses(3, () => byActor.send({ authorization: "Bearer a1" }))).toEqual([200, 200, 429]);
    // Alice's second token is still alice; bob is someone else, from the same address.
    expect((await byActor.send({ authorization: "Bearer a2" })).status).toBe(429);
    expect((await byActor.send({ authorization: "Bearer b1" })).status).toBe(200);
    expect(byActor.audit.filter((e) => e.outcome === "denied").map((e) => [e.reason, e.statusCode, e.actor?.id])).toEqual([
      ...Array(5).fill(["no_credentials", 401, undefined]),
      ["rate_limited", 429, "alice"],
      ["rate_limited", 429, "alice"],
    ]);

    const byToken = route({ rateLimits: [{ limit: 1, windowSeconds: 60, key: "token" }] });
    expect(await statuses(2, () => byToken.send({ authorization: "Bearer a1" }))).toEqual([200, 429]);
    expect((await byToken.send({ authorization: "Bearer a2" })).status).toBe(200);
  });

  it("counts a JWT by what it signs: a signature respelled in its ignored last bits is the same token", async () => {
    // A 256-byte RS256 signature is 342 base64url characters, the last holding 4 bits decoders
    // drop: jose accepts "...EWA" and "...EWB" alike, so they must share one allowance.
    const jwt = (last: string) => `eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.${"x".repeat(341)}${last}`;
    const byToken = route({ rateLimits: [{ limit: 1, windowSeconds: 60, key: "token" }] });
    expect((await byToken.send({ authorization: `Bearer ${jwt("A")}` })).status).toBe(200);
    for (const last of ["B", "C", "D"]) expect((await byToken.send({ authorization: `Bearer ${jwt(last)}` })).status, last).toBe(429);
  });

  it("counts a request without the named credential by its actor, and one without an actor by its address", async () => {
    const optional = route({ auth: { required: false }, rateLimits: [{ limit: 1, windowSeconds: 60, key: "session" }] });
    // A bearer request has no signed-in session: its actor counts.
    expect(await statuses(2, () => optional.send({ authorization: "Bearer a1" }))).toEqual([200, 429]);
    expect((await optional.send({ authorization: "Bearer b1" })).status).toBe(200);
    // No actor at all: the address.
    expect(await statuses(2, () => optional.send({}, "192.0.2.9"))).toEqual([200, 429]);
    expect((await optional.send({}, "192.0.2.10")).status).toBe(200);
  });

  it("applies every declared limit, and names each in the fields", async () => {
    const { send } = route({
      rateLimits: [{ limit: 5, windowSeconds: 1, key: "ip" }, { limit: 2, windowSeconds: 3600, key: "actor" }, { limit: 100, windowSeconds: 60, key: "ip" }],
    });
    const ok = await send({ authorization: "Bearer a1" });
    expect(ok.headers.get("ratelimit-policy")).toBe('"ip-1s";q=5;w=1, "ip-60s";q=100;w=60, "actor-3600s";q=2;w=3600');
    expect(ok.headers.get("ratelimit")).toBe('"ip-1s";r=4;t=1, "ip-60s";r=99;t=50, "actor-3600s";r=1;t=3590');
    await send({ authorization: "Bearer a1" });
    const refused = await send({ authorization: "Bearer a1" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit")).toBe('"actor-3600s";r=0;t=3590');
    expect(refused.headers.get("retry-after")).toBe("3590");
  });

  it("keeps counters of different routes and kinds apart: no key collides", async () => {
    const a = route({ public: true, auth: undefined, action: undefined, rateLimits: [{ limit: 1, windowSeconds: 60, key: "ip" }] });
    expect((await a.send({}, "alice")).status).toBe(200);
    // An actor whose id is an address does not share the address's counter.
    const b = route({ rateLimits: [{ limit: 1, windowSeconds: 60, key: "actor" }, { limit: 1, windowSeconds: 60, key: "ip" }] });
    expect((await b.send({ authorization: "Bearer a1" }, "user\u0000alice")).status).toBe(200);
  });
});

describe("the client's address as a key", () => {
  it("is an IPv4 address as written, an IPv6 address by its /64, an IPv4-mapped one as IPv4", () => {
    expect(addressClient("203.0.113.7")).toBe("203.0.113.7");
    expect(addressClient("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(addressClient("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(addressClient("2001:0db8:0001:0002::ffff")).toBe("2001:db8:1:2::/64");
    expect(addressClient("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressClient("::1")).toBe("0:0:0:0::/64");
    expect(addressClient("::ffff:198.51.100.3")).toBe("198.51.100.3");
    expect(addressClient("")).toBe("unknown");
  });

  it("is one client for every spelling of one address: no second allowance by writing it differently", () => {
    // The same /64 as the URL parser reads it: case, leading zeros, `::` in the prefix, brackets, zone ids.
    for (
      const spelling of ["2001:DB8:1:2:0:0:0:2", "2001:0db8:0001:0002::3", "[2001:db8:1:2::4]", "2001:db8:1:2::5%eth0", "2001:db8:1:2:ffff:ffff:ffff:ffff"]
    ) {
      expect(addressClient(spelling), spelling).toBe("2001:db8:1:2::/64");
    }
    expect(addressClient("2001:db8:0::3")).toBe("2001:db8:0:0::/64");
    // A dotted tail is two groups: these are one address.
    expect(addressClient("1:2::3:4:5:1.2.3.4")).toBe(addressClient("1:2:0:3:4:5:1.2.3.4"));
    expect(addressClient("1:2::3:4:5:1.2.3.4")).toBe("1:2:0:3::/64");
    // IPv4-mapped in every spelling is the IPv4 address, never one /64 shared by all of IPv4.
    for (const spelling of ["::ffff:203.0.113.8", "::FFFF:203.0.113.8", "0:0:0:0:0:ffff:203.0.113.8", "::ffff:cb00:7108", "[::ffff:203.0.113.8]"]) {
      expect(addressClient(spelling), spelling).toBe("203.0.113.8");
    }
    expect(addressClient("not:an:address")).toBe("not:an:address");
    expect(addressClient("::1]:80/@[::2")).toBe("::1]:80/@[::2"); // never read as another address
  });
});

describe("rate limits in a plan", () => {
  const plan = (rateLimits: unknown, extra: Partial<RoutePlanInput> = {}) => () =>
    compileRoutePlan({ method: "GET", pattern: "/x", public: false, auth: { required: true }, action: "x", rateLimits, ...extra });

  it("are checked when the route is registered, with a message that says what is wrong", () => {
    expect(plan([{ limit: 0, windowSeconds: 60, key: "ip" }])).toThrow(/limit must be a whole number from 1 to 1000000000/);
    expect(plan([{ limit: 1.5, windowSeconds: 60, key: "ip" }])).toThrow(/limit must be a whole number/);
    expect(plan([{ limit: 10, windowSeconds: 86_401, key: "ip" }])).toThrow(/windowSeconds must be a whole number from 1 to 86400/);
    expect(plan([{ limit: 10, windowSeconds: 60, key: "user" }])).toThrow(/key must be one of "ip", "actor", "token", "session"/);
    expect(plan([{ limit: 10, windowSeconds: 60, key: "ip", burst: 3 }])).toThrow(RoutePlanError);
    expect(plan([{ limit: 10, windowSeconds: 60, key: "actor" }], { public: true, auth: undefined, action: undefined })).toThrow(
      'GET /x: a public route has no actor, token or session to count: its .rateLimit key must be "ip", not "actor"',
    );
    expect(plan([{ limit: 10, windowSeconds: 60, key: "session" }])().rateLimits).toEqual([{ limit: 10, windowSeconds: 60, key: "session" }]);
    expect(plan(undefined)().rateLimits).toBeUndefined();
  });
});
