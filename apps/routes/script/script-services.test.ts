/** `require("resources")` and `require("audit")`: a handler's own records, in process and on threads. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeRuntime } from "#lib/adapters/node";
import { nodeThreadSpawner } from "#lib/adapters/node/threads";
import { openSqlStore } from "#lib/db/open";
import type { SqlStore } from "#lib/db";
import { createRouteHost, type RouteHost, type RouteHostOptions } from "../host/host.ts";
import { threadScriptRuntime } from "./runtime.ts";
import { DEFAULT_SCRIPT_LIMITS } from "./script-sandbox.ts";
import { storeServices } from "./script-services.ts";
import { getResource, listResources, prepareRoutesStore, putResource, sqlAuditSink, sqlResourceResolver } from "../store/store.ts";
import { call, scriptHost } from "../testing.ts";

const SCRIPT = `const httpmod = require("httpmod"); const app = httpmod.app();
const resources = require("resources"), audit = require("audit");
const note = httpmod.resource("note").idFromParam("id").mustExist();
app.post("/notes").public().handle(async (ctx, res) => res.status(201).json(await resources.put({ type: "note", tenantId: "acme", owner: "ann", attributes: { title: ctx.body.title } })));
app.get("/notes").public().handle(async () => JSON.stringify(await resources.list("note", { tenantId: "acme" })));
app.get("/notes/:id").public().handle(async (ctx) => JSON.stringify(await resources.get("note", ctx.params.id)));
app.delete("/notes/:id").public().handle(async (ctx) => JSON.stringify(await resources.remove("note", ctx.params.id)));
app.post("/raw").public().handle(async (ctx, res) => {
  try { return JSON.stringify(await resources[ctx.body.fn](...ctx.body.args)); }
  catch (e) { res.status(400).json({ name: e.name, message: e.message, code: e.code }); }
});
app.get("/read/:id").auth(httpmod.user().required()).resource(note).allow("notes:read").audit("note.read").handle(async (ctx) =>
  JSON.stringify((await audit.events({ resource: { type: "note", id: ctx.params.id } })).map((e) => e.outcome)));
`;

const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { "content-type": "application/json" } });

let store: SqlStore;
beforeEach(async () => {
  store = await openSqlStore(nodeRuntime(), ":memory:");
  await prepareRoutesStore(store);
});
afterEach(() => store.close());

function options(s: SqlStore | undefined): Omit<RouteHostOptions, "runtime"> {
  return {
    dev: true,
    services: storeServices(s),
    auth: s && {
      authenticator: { authenticate: () => ({ id: "ann", kind: "user" }) },
      authorizer: { authorize: () => ({ allow: true }) },
      resources: sqlResourceResolver(s),
      audit: sqlAuditSink(s),
    },
  };
}

async function exercise(host: RouteHost) {
  const created = await call(host, "POST", "/notes", json({ title: "Plan" }));
  expect(created.status).toBe(201);
  expect(created.json).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), tenantId: "acme", type: "note", owner: "ann", title: "Plan" });
  const id = created.json.id as string;
  expect(await getResource(store, "note", id)).toEqual(created.json);
  await putResource(store, { type: "note", id: "other", tenantId: "globex" });
  expect((await call(host, "GET", "/notes")).json).toEqual([created.json]);
  expect((await call(host, "GET", `/notes/${id}`)).json).toEqual(created.json);
  // The pipeline's resolver sees what the script wrote; the script reads the audit of it.
  // (This request's own "allowed" is written while its handler runs: it may not be there yet.)
  expect((await call(host, "GET", `/read/${id}`)).status).toBe(200);
  expect(((await call(host, "GET", `/read/${id}`)).json as string[]).slice(-2)).toEqual(["completed", "allowed"]);
  expect((await call(host, "DELETE", `/notes/${id}`)).json).toBe(true);
  expect((await call(host, "DELETE", `/notes/${id}`)).json).toBe(false);
  expect((await call(host, "GET", `/notes/${id}`)).json).toBeNull();
  expect((await listResources(store, "note")).map((r) => r.id)).toEqual(["other"]);
}

describe("the store's script services", () => {
  it("let a handler create, list, read and delete resources, and read their audit, in process", async () => {
    const host = await scriptHost(SCRIPT, options(store));
    await exercise(host);
    await host.close();
  });

  it("do the same from handlers on threads (the thread asks the host)", async () => {
    const host = createRouteHost({
      ...options(store),
      runtime: (natives, hostCalls) =>
        threadScriptRuntime(nodeThreadSpawner(new URL("../entries/node-thread.ts", import.meta.url)), {
          natives,
          hostCalls,
          limits: DEFAULT_SCRIPT_LIMITS,
          threads: 1,
        }),
    });
    await host.loadScript({ entry: "/app.js", files: { "/app.js": SCRIPT } });
    await exercise(host);
    await host.close();
  });

  it("refuse bad arguments with a TypeError the script can catch, and store nothing", async () => {
    const host = await scriptHost(SCRIPT, options(store));
    const raw = (fn: string, ...args: unknown[]) => call(host, "POST", "/raw", json({ fn, args }));
    const cases: [string, unknown[], string][] = [
      ["put", [{ type: "note", id: "a", tenantId: "t", attributes: { id: "x" } }], "resources.put: attributes.id would shadow the resource's own id"],
      ["put", [{ type: "", id: "a" }], "resources.put: type must not be empty"],
      ["put", [{ type: "note", color: "red" }], "resources.put: takes { type, id?, tenantId?, owner?, attributes? } and nothing else"],
      ["put", ["note"], "resources.put: takes { type, id?, tenantId?, owner?, attributes? } and nothing else"],
      ["get", ["note"], "resources.get: id must be a string"],
      ["list", ["note", { limit: 0 }], "resources.list: limit must be at least 1"],
      ["list", ["note", { tenant: "t" }], "resources.list: list options must be { tenantId?, owner?, limit? }"],
    ];
    for (const [fn, args, message] of cases) {
      const r = await raw(fn, ...args);
      expect([r.status, r.json], `${fn} ${JSON.stringify(args)}`).toEqual([400, { name: "TypeError", message }]);
    }
    expect(await listResources(store, "note")).toEqual([]);
    await host.close();
  });

  it("fail with STORE_MISSING without a store, while the script still loads", async () => {
    const host = await scriptHost(SCRIPT, options(undefined));
    const r = await call(host, "POST", "/raw", json({ fn: "get", args: ["note", "a"] }));
    expect(r.json).toEqual({ name: "Error", message: "resources.get: the host has no store (start it with --db)", code: "STORE_MISSING" });
    await host.close();
  });

  it("cannot be called while the script loads", async () => {
    await expect(scriptHost(`require("resources").list("note");`, options(store))).rejects.toThrow(
      'require("resources").list() is only possible from a handler',
    );
  });
});
