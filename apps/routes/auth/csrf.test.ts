/** The CSRF protector in the pipeline: a token bound to the host session, header or form field. */
import { describe, expect, it } from "vitest";
import type { RouteHost } from "../host/host.ts";
import { call, scriptHost } from "../testing.ts";
import { createCsrfProtector } from "./csrf.ts";

const SCRIPT = `const httpmod = require("httpmod"); const app = httpmod.app(); const user = httpmod.user().required();
app.get("/form").auth(user).allow("notes:write").handle((ctx) => ctx.csrfToken);
app.get("/public").public().handle((ctx) => String(ctx.csrfToken));
app.post("/notes").auth(user).csrf().allow("notes:write").handle((ctx, res) => res.status(201).json(ctx.body));`;

async function host(): Promise<RouteHost> {
  return scriptHost(SCRIPT, {
    auth: {
      authenticator: { authenticate: () => ({ id: "alice", kind: "user" }) },
      authorizer: { authorize: () => ({ allow: true }) },
      csrf: createCsrfProtector({ secret: "test-key" }),
    },
  });
}

/** A page visit: the session cookie and the token the page would embed. */
async function visit(h: RouteHost): Promise<{ cookie: string; token: string }> {
  const page = await call(h, "GET", "/form");
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  return { cookie, token: page.text };
}

describe("the CSRF protector", () => {
  it("accepts the session's token in the X-CSRF-Token header, a form field or a JSON field", async () => {
    const h = await host();
    const { cookie, token } = await visit(h);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await call(h, "POST", "/notes", { headers: { cookie, "x-csrf-token": token, "content-type": "application/json" }, body: '{"t":1}' })).status).toBe(
      201,
    );
    expect((await call(h, "POST", "/notes", { headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: `t=2&_csrf=${token}` })).json)
      .toEqual({ t: "2", _csrf: token });
    expect((await call(h, "POST", "/notes", { headers: { cookie, "content-type": "application/json" }, body: JSON.stringify({ t: 3, _csrf: token }) })).status)
      .toBe(201);
    await h.close();
  });

  it("refuses a missing or wrong token, a token without its session cookie, and another session's token: 403", async () => {
    const h = await host();
    const mine = await visit(h);
    const theirs = await visit(h);
    for (
      const headers of <Record<string, string>[]> [
        { cookie: mine.cookie },
        { cookie: mine.cookie, "x-csrf-token": "A".repeat(43) },
        { "x-csrf-token": mine.token },
        { cookie: mine.cookie, "x-csrf-token": theirs.token },
      ]
    ) {
      const res = await call(h, "POST", "/notes", { headers: { ...headers, "content-type": "application/json" }, body: "{}" });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe("CSRF_FAILED");
    }
    await h.close();
  });

  it("gives public routes no token, so they cost no HMAC and set no cookie", async () => {
    const h = await host();
    const res = await call(h, "GET", "/public");
    expect(res.text).toBe("undefined");
    expect(res.headers.get("set-cookie")).toBeNull();
    await h.close();
  });
});
