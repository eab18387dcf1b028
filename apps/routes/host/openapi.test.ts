/** The plan as OpenAPI 3.1: valid against the schema, and saying what the host enforces per route. */
import { fileURLToPath } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { memoryFileTree } from "#lib/files";
import { runToEnd } from "#test/runtimes/processes.ts";
import { scriptHost } from "../testing.ts";
import { planOpenApi } from "./openapi.ts";

const SCRIPT = `
const httpmod = require("httpmod");
const app = httpmod.app();
const user = httpmod.user().required();
const note = httpmod.resource("note").idFromParam("id").tenantFromParam("tenant").mustExist();
app.mount("/idp", require("idp").handler(), { stripPrefix: true, excludePrefixes: ["/idp/debug"] });
app.staticFromAssetsModule("/ui", require("fs:assets"), "/");
app.spaFromAssetsModule("/app", require("assets"), "/");
app.get("/").public().handle(() => "hi");
app.get("/files/*").public().handle(() => "splat");
app.all("/echo/:id").public().handle(() => "echo");
app.get("/echo/:id").public().handle(() => "never: ALL above answers first");
app.post("/t/:tenant/notes/:id").auth(user).resource(note).csrf().allow("notes:write").audit("note.write").handle(() => "x");
app.get("/t/:tenant/notes/:id").auth(user).resource(note).csrf().allow("notes:read").handle(() => "x");
app.get("/maybe").auth(httpmod.user()).allow("maybe").handle(() => "x");
app.route("PROPFIND", "/dav").public().handle(() => "dav");
`;

// deno-lint-ignore no-explicit-any -- the document is read as data
async function documentOf(): Promise<any> {
  const host = await scriptHost(SCRIPT, {
    mountables: { idp: { handler: () => new Response("idp") } },
    assets: { assets: { tree: memoryFileTree({ "a/index.html": "x" }), root: "/a" } },
  });
  host.registerPlanned({ method: "GET", pattern: "/auth/login", public: true }, () => new Response("login"));
  const doc = planOpenApi(host.routes(), { title: "routes: /app.js" });
  await host.close();
  return doc;
}

describe("planOpenApi", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(await documentOf());
    expect(validator.version).toBe("3.1");
    expect(result.errors, JSON.stringify(result.errors, null, 1)).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it("gives each route its parameters, security, CSRF header and the pipeline's answers", async () => {
    const doc = await documentOf();
    expect(doc.paths["/"].get).toMatchObject({ security: [], responses: { default: {}, "500": {} }, tags: ["script"] });
    expect(Object.keys(doc.paths["/"].get.responses).sort()).toEqual(["500", "default"]);
    expect(doc.paths["/files/{rest}"].get.parameters).toEqual([expect.objectContaining({ name: "rest", in: "path" })]);
    const post = doc.paths["/t/{tenant}/notes/{id}"].post;
    expect(post.security).toEqual([{ bearerJwt: [] }, { dpop: [] }, { signInCookie: [] }]);
    expect(post.parameters.map((p: { name: string }) => p.name)).toEqual(["tenant", "id", "X-Csrf-Token"]);
    expect(Object.keys(post.responses).sort()).toEqual(["400", "401", "403", "404", "413", "500", "default"]);
    expect(post).toMatchObject({ "x-routes-action": "notes:write", "x-routes-audit": "note.write", "x-routes-resources": ["note"] });
    // .csrf() checks unsafe methods only: no header on GET.
    const read = doc.paths["/t/{tenant}/notes/{id}"].get;
    expect(read.parameters.map((p: { name: string }) => p.name)).toEqual(["tenant", "id"]);
    expect(doc.paths["/maybe"].get.security).toEqual([{ bearerJwt: [] }, { dpop: [] }, { signInCookie: [] }, {}]);
    expect(doc.paths["/auth/login"].get).toMatchObject({ security: [], tags: ["host"] });
  });

  it("lists ALL under each method, the first registered route per method, and what OpenAPI cannot say", async () => {
    const doc = await documentOf();
    expect(Object.keys(doc.paths["/echo/{id}"]).sort()).toEqual(["delete", "get", "head", "options", "patch", "post", "put"]);
    expect(doc.paths["/echo/{id}"].get.summary).toBe("ALL /echo/:id");
    expect(doc["x-routes-unlisted"]).toEqual(["PROPFIND /dav"]);
  });

  it("shows mounts, static directories and single-page apps as such", async () => {
    const doc = await documentOf();
    expect(doc.paths["/idp/{rest}"]).toMatchObject({ "x-routes-kind": "mount", "x-routes-exclude-prefixes": ["/idp/debug"] });
    expect(doc.paths["/idp/{rest}"].get).toBeUndefined();
    expect(doc.paths["/ui/{rest}"]).toMatchObject({ "x-routes-kind": "static", get: { security: [] }, head: { security: [] } });
    expect(doc.paths["/app/{rest}"]).toMatchObject({ "x-routes-kind": "spa", "x-routes-exclude-prefixes": ["/api"] });
  });
});

describe("routes openapi", () => {
  it("prints the script's plan as a valid OpenAPI 3.1 document", async () => {
    const root = fileURLToPath(new URL("../../..", import.meta.url));
    const run = await runToEnd(process.execPath, [
      "lib/adapters/node/run.mjs",
      "apps/routes/entries/node.ts",
      "openapi",
      "--script",
      "test/contract/fixtures/routes/app.js",
    ], {
      cwd: root,
    });
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    const result = await new Validator().validate(doc);
    expect(result.errors, JSON.stringify(result.errors, null, 1)).toBeUndefined();
    expect(doc.info.title).toBe("routes: test/contract/fixtures/routes/app.js");
    expect(doc.paths["/me"].get).toMatchObject({ "x-routes-action": "notes:read", "x-routes-audit": "me.read" });
    expect(doc.paths["/static/{rest}"]).toMatchObject({ "x-routes-kind": "static" });
    expect(doc.paths["/pidp/{rest}"]).toMatchObject({ "x-routes-kind": "mount", "x-routes-exclude-prefixes": ["/pidp/debug"] });
  }, 60_000);
});
