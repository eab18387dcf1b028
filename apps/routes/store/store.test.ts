/** Resources and audit events in the SQL store, through the pipeline. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeRuntime } from "#lib/adapters/node";
import { openSqlStore } from "#lib/db/open";
import type { SqlStore } from "#lib/db";
import { prepareRoutesStore, putResource, queryAudit, sqlAuditSink, sqlResourceResolver } from "./store.ts";
import { call, scriptHost } from "../testing.ts";

let store: SqlStore;
beforeEach(async () => {
  store = await openSqlStore(nodeRuntime(), ":memory:");
  await prepareRoutesStore(store);
});
afterEach(() => store.close());

const SCRIPT = `const httpmod = require("httpmod"); const app = httpmod.app();
const note = httpmod.resource("note").idFromParam("id").tenantFromParam("tenant").mustExist();
app.get("/t/:tenant/notes/:id").auth(httpmod.user().required()).resource(note).allow("notes:read").audit("note.read")
  .handle((ctx, res) => res.json(ctx.resource("note")));`;

describe("the SQL store", () => {
  it("resolves resources by type and id, within their tenant only", async () => {
    await putResource(store, { type: "note", id: "n1", tenantId: "acme", owner: "alice", attributes: { title: "Plan" } });
    const resolver = sqlResourceResolver(store);
    const route = {} as never;
    expect(await resolver.resolve({ type: "note", id: "n1", tenantId: "acme", actor: null, route })).toEqual({
      id: "n1",
      tenantId: "acme",
      type: "note",
      owner: "alice",
      title: "Plan",
    });
    expect(await resolver.resolve({ type: "note", id: "n1", tenantId: "globex", actor: null, route })).toBeNull();
    expect(await resolver.resolve({ type: "doc", id: "n1", actor: null, route })).toBeNull();
    await putResource(store, { type: "note", id: "n1", tenantId: "acme", attributes: { title: "Plan B" } });
    expect(await resolver.resolve({ type: "note", id: "n1", actor: null, route })).toEqual({ id: "n1", tenantId: "acme", type: "note", title: "Plan B" });
  });

  it("serves a tenant's resource through the pipeline, 404 for another tenant's, and stores each outcome", async () => {
    await putResource(store, { type: "note", id: "n1", tenantId: "acme", attributes: { title: "Plan" } });
    const host = await scriptHost(SCRIPT, {
      auth: {
        authenticator: {
          authenticate: (req) => (req.script.headers["x-user"] ? { id: req.script.headers["x-user"]!, kind: "user", tenantIds: ["acme"] } : null),
        },
        authorizer: { authorize: ({ actor, resource }) => ({ allow: !!actor && !!resource && (actor.tenantIds ?? []).includes(resource.tenantId) }) },
        resources: sqlResourceResolver(store),
        audit: sqlAuditSink(store),
      },
    });
    expect((await call(host, "GET", "/t/acme/notes/n1", { headers: { "x-user": "alice" } })).json).toEqual({
      id: "n1",
      tenantId: "acme",
      type: "note",
      title: "Plan",
    });
    expect((await call(host, "GET", "/t/globex/notes/n1", { headers: { "x-user": "alice" } })).status).toBe(404);
    expect((await call(host, "GET", "/t/acme/notes/n1")).status).toBe(401);
    await host.close();
    // Each event was stored before its response left.
    const all = await queryAudit(store);
    expect(all.map((e) => [e.outcome, e.statusCode ?? null, e.reason ?? null])).toEqual([
      ["denied", 401, "no_credentials"],
      ["denied", 404, "resource_not_found"],
      ["completed", 200, null],
      ["allowed", null, null],
    ]);
    expect(all[2]).toMatchObject({
      event: "note.read",
      actor: { id: "alice" },
      resource: { id: "n1", tenantId: "acme" },
      requestId: "req-1",
      routeName: "GET /t/:tenant/notes/:id",
    });
    expect((await queryAudit(store, { outcome: "denied" })).map((e) => e.statusCode)).toEqual([401, 404]);
    expect((await queryAudit(store, { actor: "alice", limit: 1 })).map((e) => e.outcome)).toEqual(["denied"]);
    expect(await queryAudit(store, { since: "2999-01-01T00:00:00.000Z" })).toEqual([]);
  });
});
