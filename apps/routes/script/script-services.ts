/**
 * The host services a script's handlers call, over the route host's SQL store (store.ts). Each
 * function returns a promise in the sandbox; they cannot be called while the script loads.
 *
 * `require("resources")` writes the resources the pipeline resolves, so an app can create, edit,
 * list and delete its own records:
 *
 *   const resources = require("resources");
 *   await resources.put({ type: "note", id, tenantId, owner, attributes: { title } }); // the stored ref
 *   await resources.get("note", id);                     // the ref, or null
 *   await resources.list("note", { tenantId, owner, limit });   // refs, newest created first
 *   await resources.remove("note", id);                  // true when there was one
 *
 * `require("audit")` reads the audit events (what `routes audit` prints), newest first:
 *
 *   await audit.events({ actor, outcome, since, resource: { type, id }, limit });
 *
 * Arguments are checked here (a script is untrusted): a bad one is a TypeError in the script, a
 * store failure an Error without the database's own words. Refs are the resolver's shape:
 * `{id, tenantId, type, owner?, ...attributes}`. Without a store every call fails with
 * `STORE_MISSING`, so a script that requires them still loads (and its plan table prints).
 */
import * as v from "valibot";
import type { SqlStore } from "#lib/db";
import type { HostValue } from "#lib/sandbox";
import type { HostServiceFunction } from "../host/host.ts";
import type { AuditOutcome } from "../core/services.ts";
import { deleteResource, getResource, listResources, putResource, queryAudit } from "../store/store.ts";

const RESOURCES_MODULE = "resources";
const AUDIT_MODULE = "audit";

const name = (what: string) =>
  v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`), v.maxLength(200, `${what} is longer than 200 characters`));

const PutInput = v.strictObject(
  {
    type: name("type"),
    id: v.optional(name("id")),
    tenantId: v.optional(v.pipe(v.string("tenantId must be a string"), v.maxLength(200, "tenantId is longer than 200 characters"))),
    owner: v.optional(v.nullable(name("owner"))),
    attributes: v.optional(v.record(v.string(), v.unknown(), "attributes must be an object")),
  },
  "takes { type, id?, tenantId?, owner?, attributes? } and nothing else",
);

const AuditQuery = v.optional(
  v.strictObject(
    {
      actor: v.optional(v.string("actor must be a string")),
      outcome: v.optional(v.picklist(["allowed", "denied", "completed", "failed"], "outcome must be allowed, denied, completed or failed")),
      since: v.optional(v.pipe(v.string("since must be a string"), v.isoTimestamp("since must be an RFC 3339 time"))),
      resource: v.optional(v.strictObject({ type: v.optional(name("resource.type")), id: name("resource.id") }, "resource must be { type?, id }")),
      limit: v.optional(
        v.pipe(
          v.number("limit must be a number"),
          v.integer("limit must be a whole number"),
          v.minValue(1, "limit must be at least 1"),
          v.maxValue(1000, "limit must be at most 1000"),
        ),
      ),
    },
    "events takes { actor?, outcome?, since?, resource?, limit? }",
  ),
  {},
);

const ListOptions = v.optional(
  v.strictObject({
    tenantId: v.optional(v.string("tenantId must be a string")),
    owner: v.optional(v.string("owner must be a string")),
    limit: v.optional(
      v.pipe(
        v.number("limit must be a number"),
        v.integer("limit must be a whole number"),
        v.minValue(1, "limit must be at least 1"),
        v.maxValue(1000, "limit must be at most 1000"),
      ),
    ),
  }, "list options must be { tenantId?, owner?, limit? }"),
  {},
);

/** Attributes that would shadow the ref's own fields are refused rather than silently lost. */
const RESERVED = new Set(["id", "tenantId", "type", "owner"]);

function check<S extends v.GenericSchema>(schema: S, value: unknown, call: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value);
  if (!r.success) throw new TypeError(`${call}: ${r.issues[0].message}`);
  return r.output;
}

async function stored<T>(call: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof TypeError) throw err;
    throw Object.assign(new Error(`${call}: the store failed`), { code: "STORE_ERROR", cause: err });
  }
}

type ServiceModule = Record<string, HostServiceFunction>;

/** Both modules, by name, for `createRouteHost({ services })`; without a store, each call fails. */
export function storeServices(store: SqlStore | undefined): Record<string, ServiceModule> {
  if (!store) {
    const missing = (module: string, fns: string[]): ServiceModule =>
      Object.fromEntries(
        fns.map((fn) => [
          fn,
          () => {
            throw Object.assign(new Error(`${module}.${fn}: the host has no store (start it with --db)`), { code: "STORE_MISSING" });
          },
        ]),
      );
    return { [RESOURCES_MODULE]: missing(RESOURCES_MODULE, ["get", "list", "put", "remove"]), [AUDIT_MODULE]: missing(AUDIT_MODULE, ["events"]) };
  }
  return { [RESOURCES_MODULE]: resourcesModule(store), [AUDIT_MODULE]: auditModule(store) };
}

function auditModule(store: SqlStore): ServiceModule {
  return {
    events: (query) => {
      const q = check(AuditQuery, query ?? undefined, "audit.events");
      return stored("audit.events", async () => (await queryAudit(store, { ...q, outcome: q.outcome as AuditOutcome | undefined })) as unknown as HostValue);
    },
  };
}

function resourcesModule(store: SqlStore, options: { newId?: () => string } = {}): ServiceModule {
  const newId = options.newId ?? (() => crypto.randomUUID());
  return {
    get: (type, id) => {
      const t = check(name("type"), type, "resources.get");
      const i = check(name("id"), id, "resources.get");
      return stored("resources.get", async () => ((await getResource(store, t, i)) ?? null) as HostValue);
    },
    list: (type, opts) => {
      const t = check(name("type"), type, "resources.list");
      const o = check(ListOptions, opts ?? undefined, "resources.list");
      return stored("resources.list", async () => (await listResources(store, t, o)) as HostValue);
    },
    put: (input) => {
      const r = check(PutInput, input, "resources.put");
      const clash = Object.keys(r.attributes ?? {}).find((k) => RESERVED.has(k));
      if (clash) throw new TypeError(`resources.put: attributes.${clash} would shadow the resource's own ${clash}`);
      let attributes: Record<string, unknown> = {};
      try {
        attributes = JSON.parse(JSON.stringify(r.attributes ?? {})) as Record<string, unknown>;
      } catch {
        throw new TypeError("resources.put: attributes must be JSON data");
      }
      const resource = { type: r.type, id: r.id ?? newId(), tenantId: r.tenantId ?? "", owner: r.owner ?? undefined, attributes };
      return stored("resources.put", async () => {
        await putResource(store, resource);
        return (await getResource(store, resource.type, resource.id)) as HostValue;
      });
    },
    remove: (type, id) => {
      const t = check(name("type"), type, "resources.remove");
      const i = check(name("id"), id, "resources.remove");
      return stored("resources.remove", () => deleteResource(store, t, i));
    },
  };
}
