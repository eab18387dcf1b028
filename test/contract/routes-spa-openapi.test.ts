/**
 * The route host over HTTP on node, deno and workerd, serving
 * test/contract/fixtures/routes-spa/app.js in dev mode: a single-page app from an assets module
 * (`app.spaFromAssetsModule`), assets modules named and rooted as the original does it
 * (`require("fs:assets")`, `"/app/public"`; bundled into the Worker), and the plan as OpenAPI 3.1
 * at `/_routes/openapi.json`, checked against the OpenAPI 3.1 schema.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "../runtimes/service.ts";
import { rawRequest } from "./routes-helpers.ts";

let host: RunningService;

beforeAll(async () => {
  host = await startService("routes", {
    env: {
      ROUTES_SCRIPT: "test/contract/fixtures/routes-spa/app.js",
      ROUTES_DEV: "true",
      ROUTES_DB: "none",
      ROUTES_SESSION_SECRET: "contract-secret",
      ROUTES_ASSETS: "fs:web=test/contract/fixtures/routes-spa-assets,test/contract/fixtures/routes-assets",
    },
  });
});

afterAll(async () => {
  await host?.stop();
});

const get = (path: string, init: RequestInit = {}) => fetch(host.baseUrl + path, { redirect: "manual", ...init });
const INDEX = "<!doctype html><title>spa</title><p>spa index</p>\n";

describe("a single-page app from an assets module", () => {
  it.each([
    ["/main.js", 'console.log("main");\n', "text/javascript; charset=utf-8", null],
    ["/docs/guide.html", "<p>guide</p>\n", "text/html; charset=utf-8", null],
    ["/", INDEX, "text/html; charset=utf-8", null],
    ["/notes/42", INDEX, "text/html; charset=utf-8", "no-cache"],
    ["/deep/client/route?tab=2", INDEX, "text/html; charset=utf-8", "no-cache"],
    ["/empty/", INDEX, "text/html; charset=utf-8", "no-cache"],
  ])("GET %s: existing files as they are, the index for every other path", async (path, body, type, cache) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.headers.get("cache-control")).toBe(cache);
    expect(await res.text()).toBe(body);
  });

  it("answers HEAD for a client-side route with the index's headers and no body", async () => {
    const res = await get("/some/route", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await res.text()).toBe("");
  });

  it("leaves /api (the default exclusion) to the routes: a route answers, anything else is 404", async () => {
    expect(await (await get("/api/hello/ann")).json()).toEqual({ hello: "ann" });
    const miss = await get("/api/nothing");
    expect(miss.status).toBe(404);
    expect(await miss.json()).toMatchObject({ error: { code: "NOT_FOUND" } });
    expect((await get("/api")).status).toBe(404);
  });

  it("refuses other methods with 405 and Allow: GET, HEAD", async () => {
    const res = await get("/notes/42", { method: "POST", body: "x" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
  });

  it("serves no dot-entry (as `routes bundle` bundles none): /empty/.keep answers the index", async () => {
    for (const path of ["/empty/.keep", "/empty/%2ekeep"]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toBe(INDEX);
    }
  });

  it("leaves the host's sign-in and sign-out routes to the host, under an app at /", async () => {
    const logout = await get("/auth/logout", { method: "POST" });
    expect(logout.status).toBe(302);
    const login = await get("/auth/login");
    expect(await login.text()).not.toBe(INDEX);
  });

  it.each([
    "/../secret.txt",
    "/%2e%2e/secret.txt",
    "/%2E%2E%2Fsecret.txt",
    "/..%2fsecret.txt",
    "/..%5csecret.txt",
    "/%252e%252e/secret.txt",
    "/docs/..%2f..%2fsecret.txt",
    "/main.js%00.txt",
    "//../secret.txt",
    "/docs/%2e%2e/%2e%2e/secret.txt",
  ])("never serves a file above its rooted root: %s", async (path) => {
    const res = await rawRequest(host.port, path);
    expect(res.body).not.toContain("outside the root");
    expect([200, 400, 404]).toContain(res.status);
  });
});

describe("assets modules named and rooted as the original does", () => {
  it('serves require("fs:assets") (the plain module assets) from the rooted path /sub', async () => {
    const res = await get("/plain/");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("<p>embedded page</p>\n");
  });

  it.each(["/plain/../hello.txt", "/plain/%2e%2e/hello.txt", "/plain/..%2fhello.txt", "/plain/%252e%252e/hello.txt", "/plain/%2e%2e%5chello.txt"])(
    "never serves a file above the rooted root: %s",
    async (path) => {
      const res = await rawRequest(host.port, path);
      expect(res.body).not.toContain("embedded hello");
    },
  );
});

describe("the plan as OpenAPI 3.1 in dev mode", () => {
  it("is served at /_routes/openapi.json, valid against the OpenAPI 3.1 schema, with each route's security", async () => {
    const res = await get("/_routes/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    // deno-lint-ignore no-explicit-any -- the document is read as data
    const doc = (await res.json()) as any;
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(validator.version).toBe("3.1");
    expect(result.errors, JSON.stringify(result.errors, null, 1)).toBeUndefined();
    expect(result.valid).toBe(true);

    const hello = doc.paths["/api/hello/{name}"].get;
    expect(hello.security).toEqual([]);
    expect(hello.parameters).toEqual([expect.objectContaining({ name: "name", in: "path", required: true })]);
    const notes = doc.paths["/api/notes/{id}"].post;
    expect(notes.security).toEqual([{ bearerJwt: [] }, { dpop: [] }, { signInCookie: [] }]);
    expect(notes.parameters).toContainEqual(expect.objectContaining({ name: "X-Csrf-Token", in: "header" }));
    expect(Object.keys(notes.responses).sort()).toEqual(["400", "401", "403", "404", "413", "500", "default"]);
    expect(notes["x-routes-action"]).toBe("notes:write");
    expect(doc.components.securitySchemes).toMatchObject({ bearerJwt: { scheme: "bearer" }, dpop: { scheme: "DPoP" }, signInCookie: { in: "cookie" } });
    expect(doc.paths["/{rest}"]).toMatchObject({ "x-routes-kind": "spa", "x-routes-exclude-prefixes": ["/api"] });
    expect(doc.paths["/plain/{rest}"]).toMatchObject({ "x-routes-kind": "static" });
  });
});
