/**
 * The route host over HTTP, on the runtime of the vitest project (node, deno or workerd), serving
 * test/contract/fixtures/routes/app.js: its routes, the request object, static files, failures and
 * authorization. Authenticated routes use access tokens of our identity provider, started in this
 * process (JWT access tokens, its signing key known to the test so it can also make expired and
 * wrong-audience tokens). What a script or a request cannot do to the wire is in
 * routes-hardening.test.ts; browser sign-in in routes-sign-in.test.ts.
 */
import { generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedIdp } from "../../apps/idp/testing.ts";
import { type RunningService, startService } from "../runtimes/service.ts";
import { AUDIENCE, clientToken, rawRequest as rawRequestTo, startRoutesContract } from "./routes-helpers.ts";

let idp: StartedIdp;
let host: RunningService;
let signingKey: JWK;

beforeAll(async () => {
  ({ idp, host, signingKey } = await startRoutesContract());
});

afterAll(async () => {
  await host?.stop();
  await idp?.stop();
});

const get = (path: string, init: RequestInit = {}) => fetch(host.baseUrl + path, { redirect: "manual", ...init });

const token = (client: "reader" | "outsider", scope: string) => clientToken(idp, client, scope);

/** A token signed with the provider's own key, with the claims given (expired, another audience). */
async function minted(claims: Record<string, unknown>): Promise<string> {
  const key = await importJWK(signingKey, "RS256");
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: idp.issuer, sub: "reader", client_id: "reader", aud: AUDIENCE, scope: "notes:read", iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: "dev-key-1", typ: "at+jwt" })
    .sign(key);
}

/** GET with the path exactly as written (fetch would normalize `..` and `%2e%2e`). */
const rawRequest = (path: string) => rawRequestTo(host.port, path);

describe("public routes and the handler result rules", () => {
  it.each([
    ["/", 200, "text/html; charset=utf-8", "<h1>contract</h1>"],
    ["/text", 200, "text/plain; charset=utf-8", "PLAIN!"],
    ["/settings", 200, "application/json", '{"name":"contract","version":1}'],
    ["/json/7", 201, "application/json", '{"id":"7"}'],
    ["/nothing", 200, null, ""],
    ["/async", 200, "text/plain; charset=utf-8", "awaited!"],
    ["/files/a/b", 200, "text/plain; charset=utf-8", "splat"],
  ])("GET %s -> %i", async (path, status, type, body) => {
    const res = await get(path);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe(type);
    expect(await res.text()).toBe(body);
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("sets headers and redirects as the handler says", async () => {
    expect((await get("/json/1")).headers.get("x-extra")).toBe("yes");
    const res = await get("/redirect");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/text");
  });

  it("answers HEAD without a body, 405 with Allow for another method, and 404 for no route", async () => {
    const head = await get("/text", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await get("/text", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const missing = await get("/no/such/route");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: "NOT_FOUND", message: "no route for GET /no/such/route" } });
  });
});

describe("the request object", () => {
  it("has lower-case headers, query lists, cookies, the ip, and parsed bodies", async () => {
    const res = await get("/echo/a%20b?x=1&x=2&y=3", { headers: { "X-Custom": "v", cookie: "a=1; b=two" } });
    expect(await res.json()).toMatchObject({
      method: "GET",
      path: "/echo/a%20b",
      query: { x: ["1", "2"], y: "3" },
      params: { id: "a b" },
      headers: { custom: "v", upper: true },
      cookies: { a: "1", b: "two" },
      ip: "string",
      body: null,
    });
    const json = await get("/echo/1", { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":[1,2]}' });
    expect(await json.json()).toMatchObject({ body: { n: [1, 2] }, rawBody: '{"n":[1,2]}' });
    const form = await get("/echo/1", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a=1&a=2&b=x" });
    expect((await form.json()).body).toEqual({ a: ["1", "2"], b: "x" });
    const text = await get("/echo/1", { method: "PUT", headers: { "content-type": "text/plain" }, body: "hello" });
    expect((await text.json()).body).toBe("hello");
  });

  it("refuses bad JSON with 400, before authentication", async () => {
    for (const path of ["/echo/1", "/notes"]) {
      const res = await get(path, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("INVALID_JSON");
    }
  });

  it("keeps a host session in a signed cookie", async () => {
    const first = await get("/echo/1");
    const cookie = first.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^routes_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax$/);
    const session = (await first.json()).session;
    expect(session).toMatchObject({ isNew: true, cookieName: "routes_session" });
    const again = await get("/echo/1", { headers: { cookie: cookie.split(";")[0]! } });
    expect((await again.json()).session).toEqual({ id: session.id, isNew: false, cookieName: "routes_session" });
  });
});

describe("static files", () => {
  it("serves the directory's files and its index", async () => {
    const css = await get("/static/site.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toBe("body { color: teal; }\n");
    expect(await (await get("/static/sub/")).text()).toBe("<p>sub index</p>\n");
    expect((await get("/staticfoo")).status).toBe(404);
  });

  it.each([
    "/static/../app.js",
    "/static/%2e%2e/app.js",
    "/static/..%2fapp.js",
    "/static/..%5capp.js",
    "/static/%252e%252e%252fapp.js",
    "/static/sub/..%2f..%2fapp.js",
    "/static/site.css%00",
    "/static/%2fetc%2fpasswd",
  ])(
    "never serves a file outside the directory: %s",
    async (path) => {
      const res = await rawRequest(path);
      expect(res.body).not.toContain("httpmod");
      expect(res.body).not.toContain("root:");
      expect([400, 404]).toContain(res.status);
    },
  );
});

describe("an assets module (ROUTES_ASSETS, bundled into the Worker)", () => {
  it("serves the module's directory with app.staticFromAssetsModule, and nothing above its root", async () => {
    const page = await get("/embedded/");
    expect(page.status).toBe(200);
    expect(await page.text()).toBe("<p>embedded page</p>\n");
    expect((await get("/embedded/index.html")).headers.get("content-type")).toBe("text/html; charset=utf-8");
    for (const path of ["/embedded/../hello.txt", "/embedded/%2e%2e/hello.txt", "/embedded/..%2fhello.txt"]) {
      expect((await rawRequest(path)).body).not.toContain("embedded hello");
    }
  });
});

describe("failures", () => {
  it("turns a throwing handler into a 500 that does not show its message", async () => {
    const res = await get("/throw");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "HANDLER_FAILED", message: "internal error" } });
  });

  it("a handler waits on a timer (setTimeout) while other requests are answered", async () => {
    const order: string[] = [];
    const waiting = get("/wait").then(async (res) => {
      order.push("wait");
      return [res.status, await res.text()];
    });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the handler is now waiting on its timer
    const other = await get("/text");
    order.push("text");
    expect(await other.text()).toBe("PLAIN!");
    expect(await waiting).toEqual([200, "waited"]);
    expect(order).toEqual(["text", "wait"]);
  });

  it("answers other requests while more handlers wait on timers than there are threads", async () => {
    const order: string[] = [];
    // Six waiting handlers: more than the host's two threads (Node, Deno) hold one each, and
    // within the eight sandboxes a side keeps (each thread's; the isolate's on workerd).
    const waiting = Array.from({ length: 6 }, () =>
      get("/wait?ms=1500").then(async (res) => {
        order.push("wait");
        return [res.status, await res.text()];
      }));
    await new Promise((resolve) => setTimeout(resolve, 200)); // the handlers are now waiting
    const other = await get("/text");
    order.push("text");
    expect(await other.text()).toBe("PLAIN!");
    expect(await Promise.all(waiting)).toEqual(Array.from({ length: 6 }, () => [200, "waited"]));
    expect(order[0]).toBe("text");
  });

  it("interrupts a handler past the time limit, and keeps serving", async () => {
    expect((await get("/spin")).status).toBe(500);
    expect(await (await get("/text")).text()).toBe("PLAIN!");
  });

  it.each([1, 11, 127, 256, 0x2028])("never puts a header value with character %i on the wire: a clean 500", async (code) => {
    const res = await get(`/ctl/${code}`);
    expect(res.status).toBe(500);
    expect(res.headers.get("x-test")).toBeNull();
    expect(await res.json()).toEqual({ error: { code: "HANDLER_FAILED", message: "internal error" } });
  });

  it("never puts a header with CR or LF on the wire", async () => {
    const res = await get("/inject");
    expect(res.status).toBe(500);
    expect(res.headers.get("x-injected")).toBeNull();
    expect(res.headers.get("set-cookie") ?? "").not.toContain("evil");
  });
});

describe("authenticated routes with the identity provider's access tokens", () => {
  it("refuses a JWT of the issuer that is not an access token (an ID token): 401", async () => {
    const key = await importJWK(signingKey, "RS256");
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new SignJWT({ iss: idp.issuer, sub: "user-x", aud: AUDIENCE, scope: "notes:read", iat: now, exp: now + 600 }).setProtectedHeader({
      alg: "RS256",
      kid: "dev-key-1",
      typ: "JWT",
    }).sign(key);
    const res = await get("/me", { headers: { authorization: `Bearer ${idToken}` } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("not an access token");
  });

  it("needs credentials: 401 with a challenge", async () => {
    const res = await get("/me");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="routes"/);
    expect((await res.json()).error.code).toBe("UNAUTHENTICATED");
  });

  it("passes a client_credentials JWT whose scope grants the action", async () => {
    const res = await get("/me", { headers: { authorization: `Bearer ${await token("reader", "notes:read notes:write")}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "reader", kind: "client", action: "notes:read", route: "GET /me" });
    const post = await get("/notes", {
      method: "POST",
      headers: { authorization: `Bearer ${await token("reader", "notes:write")}`, "content-type": "application/json" },
      body: '{"t":1}',
    });
    expect(post.status).toBe(201);
    expect(await post.json()).toEqual({ saved: { t: 1 } });
  });

  it("denies an action the token does not grant: 403", async () => {
    const res = await get("/admin", { headers: { authorization: `Bearer ${await token("outsider", "notes:read")}` } });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("FORBIDDEN");
  });

  it.each([
    ["expired", { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }],
    ["for another audience", { aud: "some-other-api" }],
    ["from another issuer", { iss: "http://elsewhere.test" }],
  ])("refuses a token %s: 401", async (_name, claims) => {
    const res = await get("/me", { headers: { authorization: `Bearer ${await minted(claims)}` } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("refuses a wrongly signed token: 401", async () => {
    const good = await minted({});
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT(JSON.parse(atob(good.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))))
      .setProtectedHeader({ alg: "RS256", kid: "dev-key-1", typ: "at+jwt" })
      .sign(privateKey);
    expect((await get("/me", { headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
    expect((await get("/me", { headers: { authorization: `Bearer ${good}` } })).status).toBe(200);
  });

  it("checks CSRF on unsafe methods: the token a page got, with its session cookie, in a header or a form field", async () => {
    const auth = { authorization: `Bearer ${await token("reader", "notes:write")}` };
    const page = await get("/form", { headers: auth });
    expect(page.status).toBe(200);
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    const csrf = await page.text();
    const form = { ...auth, cookie, "content-type": "application/x-www-form-urlencoded" };
    const ok = await get("/csrf-notes", { method: "POST", headers: form, body: `text=hi&_csrf=${csrf}` });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ saved: "hi" });
    expect(
      (await get("/csrf-notes", {
        method: "POST",
        headers: { ...auth, cookie, "x-csrf-token": csrf, "content-type": "application/json" },
        body: '{"text":"json"}',
      })).status,
    ).toBe(201);
    for (const headers of [form, { ...auth, "content-type": "application/x-www-form-urlencoded" }]) {
      const refused = await get("/csrf-notes", { method: "POST", headers, body: headers === form ? "text=hi&_csrf=wrong" : `text=hi&_csrf=${csrf}` });
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.code).toBe("CSRF_FAILED");
    }
  });

  it("fails closed for a resource route when the host has no resource resolver: 500", async () => {
    const res = await get("/docs/1", { headers: { authorization: `Bearer ${await token("reader", "notes:read")}` } });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "INTERNAL", message: "internal error" } });
  });
});

describe("authorization by a policy (ROUTES_POLICY)", () => {
  let withPolicy: RunningService;
  const POLICY = JSON.stringify({
    roles: { claims: ["scope"] },
    rules: [{ roles: ["notes.editor"], allow: ["notes:*"] }, { roles: ["ops"], allow: ["admin"] }],
  });
  beforeAll(async () => {
    withPolicy = await startService("routes", {
      env: { ROUTES_SCRIPT: "test/contract/fixtures/routes/app.js", ROUTES_ISSUER: idp.issuer, ROUTES_AUDIENCE: AUDIENCE, ROUTES_POLICY: POLICY },
    });
  });
  afterAll(() => withPolicy?.stop());

  it("allows what the actor's roles allow and denies the rest", async () => {
    const editor = { authorization: `Bearer ${await token("reader", "notes.editor")}` };
    const me = await fetch(`${withPolicy.baseUrl}/me`, { headers: editor });
    expect(me.status).toBe(200);
    expect((await me.json()).action).toBe("notes:read");
    expect((await fetch(`${withPolicy.baseUrl}/admin`, { headers: editor })).status).toBe(403);
    // The scope names the action itself, but this host goes by its policy.
    expect((await fetch(`${withPolicy.baseUrl}/me`, { headers: { authorization: `Bearer ${await token("reader", "notes:read")}` } })).status).toBe(403);
    expect(await (await fetch(`${withPolicy.baseUrl}/admin`, { headers: { authorization: `Bearer ${await token("outsider", "ops")}` } })).text()).toBe(
      "admin only",
    );
  });
});
