import { type Context, Hono } from "hono";
import { describe, expect, it } from "vitest";
import { accessTokenProblem, challenge, listensBeyondLoopback, presentedToken, requireAccessToken, tokenMatches } from "./access-token.ts";

const TOKEN = "s3cret-token-0123456789";

function guarded() {
  const app = new Hono();
  const deny = (c: Context, presented: boolean) => c.json({ denied: true, presented }, 401, { "WWW-Authenticate": challenge("test", presented) });
  app.use(requireAccessToken({ token: TOKEN, cookie: "test_auth", deny, open: (c) => c.req.path === "/health" }));
  app.get("/", (c) => c.text("page"));
  app.get("/health", (c) => c.text("ok"));
  app.get("/api/x", (c) => c.text(`x ${c.req.query("a") ?? ""}`));
  return app;
}

describe("tokenMatches", () => {
  it("is true only for the same string", async () => {
    expect(await tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(await tokenMatches(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(await tokenMatches(TOKEN.slice(1), TOKEN)).toBe(false);
    expect(await tokenMatches("", TOKEN)).toBe(false);
    expect(await tokenMatches(undefined, TOKEN)).toBe(false);
  });
});

describe("accessTokenProblem", () => {
  it("refuses short tokens and spaces, accepts a long printable one", () => {
    expect(accessTokenProblem("short")).toMatch(/at least 16/);
    expect(accessTokenProblem("with a space inside it")).toMatch(/without spaces/);
    expect(accessTokenProblem(TOKEN)).toBeUndefined();
  });
});

describe("listensBeyondLoopback", () => {
  it.each(["0.0.0.0", "::", "", "192.168.1.20", "10.0.0.1"])("%s is reachable from elsewhere", (h) => expect(listensBeyondLoopback(h)).toBe(true));
  it.each(["127.0.0.1", "127.0.0.2", "::1", "localhost"])("%s is loopback", (h) => expect(listensBeyondLoopback(h)).toBe(false));
});

describe("presentedToken", () => {
  const app = new Hono();
  app.get("/", (c) => c.text(presentedToken(c, "test_auth") ?? "none"));
  it("reads the Bearer header first, then the cookie", async () => {
    expect(await (await app.request("/", { headers: { authorization: "Bearer abc", cookie: "test_auth=def" } })).text()).toBe("abc");
    expect(await (await app.request("/", { headers: { authorization: "bearer abc" } })).text()).toBe("abc");
    expect(await (await app.request("/", { headers: { cookie: "test_auth=def" } })).text()).toBe("def");
    expect(await (await app.request("/", { headers: { authorization: "Basic abc" } })).text()).toBe("none");
  });
});

describe("requireAccessToken", () => {
  const app = guarded();

  it("401 with a Bearer challenge without a token, invalid_token with a wrong one", async () => {
    const none = await app.request("/api/x");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="test"');
    const wrong = await app.request("/api/x", { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer realm="test", error="invalid_token"');
    expect((await app.request("/api/x", { headers: { cookie: `test_auth=${TOKEN}x` } })).status).toBe(401);
  });

  it("passes with the Bearer token or the cookie; the open path needs neither", async () => {
    expect(await (await app.request("/api/x", { headers: { authorization: `Bearer ${TOKEN}` } })).text()).toBe("x ");
    expect(await (await app.request("/api/x", { headers: { cookie: `test_auth=${TOKEN}` } })).text()).toBe("x ");
    expect((await app.request("/health")).status).toBe(200);
  });

  it("the link sets an HttpOnly SameSite=Strict cookie and redirects to the same URL without the token", async () => {
    const res = await app.request(`/api/x?a=1&token=${TOKEN}`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/api/x?a=1");
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(new RegExp(`^test_auth=${TOKEN};`));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    expect((await app.request(`https://host.test/?token=${TOKEN}`)).headers.get("set-cookie")).toMatch(/Secure/);
  });

  it("the link's redirect never leaves the origin, whatever the path (found by an attack: //evil.example/)", async () => {
    const any = new Hono();
    any.use(requireAccessToken({ token: TOKEN, cookie: "test_auth", deny: (c) => c.text("no", 401) }));
    any.get("*", (c) => c.text("page"));
    for (const path of ["//evil.example/", "///evil.example/x", "/\\evil.example/"]) {
      const res = await any.fetch(new Request(`http://127.0.0.1${path}?token=${TOKEN}`));
      expect(res.status, path).toBe(302);
      const location = res.headers.get("location")!;
      expect(location, path).toMatch(/^\/[^/\\]/);
      expect(new URL(location, "http://127.0.0.1/").origin, path).toBe("http://127.0.0.1");
    }
  });

  it("a link with a wrong token sets nothing; a POST never signs in by query", async () => {
    const res = await app.request("/?token=wrong");
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect((await app.request(`/api/x?token=${TOKEN}`, { method: "POST" })).status).toBe(401);
  });
});
