/** `.rateLimit({limit, windowSeconds, key})` in the script API: on which stages, and what it refuses, where it is called. */
import { describe, expect, it } from "vitest";
import { call, scriptHost } from "../testing.ts";

async function lines(body: string): Promise<{ out: string[]; routes: unknown[] }> {
  const host = await scriptHost(
    `const httpmod = require("httpmod"); const app = httpmod.app(); const out = []; const user = httpmod.user().required();
     const attempt = (f) => { try { const r = f(); out.push("ok " + String(r)); } catch (e) { out.push(e.name + ": " + e.message); } };
     ${body}
     app.get("/out").public().handle((ctx, res) => res.json(out));`,
  );
  const res = await call(host, "GET", "/out");
  const routes = host.routes();
  await host.close();
  return { out: res.json as string[], routes };
}

describe("httpmod .rateLimit", () => {
  it("is offered after .public() and .auth(...), adds a limit each time, and reaches the plan", async () => {
    const { out, routes } = await lines(`
      attempt(() => typeof app.get("/a").rateLimit);
      attempt(() => app.get("/p").public().rateLimit({ limit: 5, windowSeconds: 60 }).rateLimit({ limit: 100, windowSeconds: 3600, key: "ip" }).handle(() => "p"));
      attempt(() => app.get("/q").auth(user).rateLimit({ limit: 2, windowSeconds: 60, key: "actor" }).allow("q").rateLimit({ limit: 9, windowSeconds: 9, key: "token" }).handle(() => "q"));`);
    expect(out).toEqual([
      expect.stringMatching(/^TypeError: app\.get\("\/a"\)\.rateLimit is not a function/),
      "ok undefined",
      "ok undefined",
    ]);
    expect(routes).toEqual(expect.arrayContaining([
      expect.objectContaining({ pattern: "/p" }),
      expect.objectContaining({ pattern: "/q" }),
    ]));
  });

  it("refuses bad arguments where it is called, saying what is wrong", async () => {
    const { out } = await lines(`
      attempt(() => app.get("/b").public().rateLimit());
      attempt(() => app.get("/b").public().rateLimit({ limit: 0, windowSeconds: 60 }));
      attempt(() => app.get("/b").public().rateLimit({ limit: 10, windowSeconds: "60" }));
      attempt(() => app.get("/b").public().rateLimit({ limit: 10, windowSeconds: 60, key: "user" }));
      attempt(() => app.get("/b").public().rateLimit({ limit: 10, windowSeconds: 60, burst: 2 }));
      attempt(() => app.get("/b").public().rateLimit({ limit: 10, windowSeconds: 60, key: "actor" }));`);
    expect(out).toEqual([
      'TypeError: .rateLimit({limit, windowSeconds, key}): expected an object such as {limit: 10, windowSeconds: 60, key: "ip"}',
      "TypeError: .rateLimit({limit, windowSeconds, key}): limit must be a whole number from 1 to 1000000000, got 0",
      'TypeError: .rateLimit({limit, windowSeconds, key}): windowSeconds must be a whole number from 1 to 86400, got "60"',
      'TypeError: .rateLimit({limit, windowSeconds, key}): key must be one of "ip", "actor", "token", "session", got "user"',
      'TypeError: .rateLimit({limit, windowSeconds, key}): unknown option "burst"',
      'TypeError: .rateLimit({limit, windowSeconds, key}): a public route has no actor, token or session to count: use key "ip" (or declare .auth(...) first)',
    ]);
  });
});
