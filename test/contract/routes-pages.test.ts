/**
 * The route host answers a browser with pages and a program with JSON: a refused or missed request
 * that accepts HTML gets an HTML page with the status, a plain sentence, a hint and a link back;
 * the same request from an API client keeps the JSON envelope; a handler's own answers are left as
 * they are. Answers to an authenticated actor carry `Cache-Control: no-store`, so Back after signing
 * out does not show them from the browser's cache. On node, deno and workerd (the vitest project).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedIdp, startIdp } from "../../apps/idp/testing.ts";
import { type RunningService, startService } from "../runtimes/service.ts";

const AUDIENCE = "routes-pages";
const CLIENTS = [{ client_id: "reader", client_secret: "reader-secret", redirect_uris: ["http://localhost/cb"] }];
const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

let idp: StartedIdp;
let host: RunningService;

beforeAll(async () => {
  idp = await startIdp({ clients: CLIENTS, accessTokenFormat: "jwt", accessTokenAudience: AUDIENCE });
  host = await startService("routes", {
    env: {
      ROUTES_SCRIPT: "test/contract/fixtures/routes-pages/app.js",
      ROUTES_ISSUER: idp.issuer,
      ROUTES_AUDIENCE: AUDIENCE,
      ROUTES_SESSION_SECRET: "pages-secret",
      ROUTES_DB: "none",
    },
  });
});

afterAll(async () => {
  await host?.stop();
  await idp?.stop();
});

async function token(scope: string): Promise<string> {
  const res = await fetch(`${idp.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: "reader", client_secret: "reader-secret", scope }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const get = (path: string, headers: Record<string, string> = {}) => fetch(host.baseUrl + path, { redirect: "manual", headers });

describe("a browser gets a page, a program JSON", () => {
  it("a path with no route: 404 page with a sentence and a link back; JSON for an API client", async () => {
    const page = await get("/no/such/page", { accept: BROWSER });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const text = await page.text();
    expect(text).toContain("<h1>404 Not found</h1>");
    expect(text).toContain("There is no page at /no/such/page.");
    expect(text).toContain('<a href="/" id="back">');
    expect(text).toContain("<code>NOT_FOUND</code>");

    for (const accept of ["application/json", "*/*"]) {
      const api = await get("/no/such/page", { accept });
      expect(api.status).toBe(404);
      expect(api.headers.get("content-type")).toBe("application/json");
      expect(await api.json()).toEqual({ error: { code: "NOT_FOUND", message: "no route for GET /no/such/page" } });
    }
    // A handler's own error is left as the handler made it, even for a browser.
    const own = await get("/own-404", { accept: BROWSER });
    expect(own.status).toBe(404);
    expect(own.headers.get("content-type")).toBe("application/json");
    expect(await own.json()).toEqual({ error: { code: "MINE", message: "the handler's own" } });
  });

  it("refused by the authorizer: 403 page with a hint to sign in as another user, not cached", async () => {
    const bearer = `Bearer ${await token("other:thing")}`;
    const page = await get("/private", { accept: BROWSER, authorization: bearer });
    expect(page.status).toBe(403);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const text = await page.text();
    expect(text).toContain("<h1>403 Not allowed</h1>");
    expect(text).toMatch(/Signed in as the wrong person\? <a href="\/auth\/logout">Sign out<\/a>, then sign in as another user\./);
    expect(text).toContain('<a href="/" id="back">');

    const api = await get("/private", { accept: "application/json", authorization: bearer });
    expect(api.status).toBe(403);
    expect(await api.json()).toEqual({ error: { code: "FORBIDDEN", message: "not allowed" } });
  });

  it("a wrong method: 405 page keeping Allow", async () => {
    const res = await fetch(`${host.baseUrl}/`, { method: "DELETE", headers: { accept: BROWSER } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await res.text()).toContain("/ does not answer DELETE requests.");
  });
});

describe("Cache-Control on authenticated answers", () => {
  it("no-store for an authenticated actor's page; public pages as before", async () => {
    const res = await get("/private", { accept: BROWSER, authorization: `Bearer ${await token("notes:read")}` });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("<h1>private to reader</h1>");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const open = await get("/", { accept: BROWSER });
    expect(open.status).toBe(200);
    expect(open.headers.get("cache-control")).toBeNull();
  });
});
