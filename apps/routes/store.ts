/**
 * The route host's SQL store (lib/db: an embedded libSQL file, `:memory:`, or a libSQL server):
 * resources the ResourceResolver reads, and the audit events an AuditSink writes, with the query
 * behind `routes audit`.
 *
 * A resource is (type, id) with a tenant, an owner and JSON attributes; the ResourceRef a handler
 * sees is `{id, tenantId, type, owner?, ...attributes}`. A resource asked for under another tenant
 * (`tenantFromParam`) is not found, so a URL never tells whether another tenant's resource exists.
 */
import { applyMigrations, type Migration } from "../../lib/db/migrate.ts";
import type { SqlStore, SqlValue } from "../../lib/db/store.ts";
import type { AuditEvent, AuditOutcome, AuditSink, ResourceRef, ResourceResolver } from "./services.ts";

export const ROUTES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "resources and audit events",
    statements: [
      `CREATE TABLE resources (
        type TEXT NOT NULL,
        id TEXT NOT NULL,
        tenant_id TEXT NOT NULL DEFAULT '',
        owner TEXT,
        attributes TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (type, id)
      )`,
      `CREATE TABLE audit_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        event TEXT NOT NULL,
        outcome TEXT NOT NULL,
        actor_id TEXT,
        action TEXT,
        status_code INTEGER,
        request_id TEXT NOT NULL,
        record TEXT NOT NULL
      )`,
      "CREATE INDEX audit_events_at ON audit_events (at)",
      "CREATE INDEX audit_events_actor ON audit_events (actor_id, at)",
    ],
  },
];

export const prepareRoutesStore = (store: SqlStore) => applyMigrations(store, ROUTES_MIGRATIONS);

export interface StoredResource {
  type: string;
  id: string;
  tenantId?: string;
  owner?: string;
  attributes?: Record<string, unknown>;
}

/** Creates or replaces a resource. */
export async function putResource(store: SqlStore, r: StoredResource): Promise<void> {
  await store.execute(
    `INSERT INTO resources (type, id, tenant_id, owner, attributes) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (type, id) DO UPDATE SET tenant_id = excluded.tenant_id, owner = excluded.owner, attributes = excluded.attributes`,
    [r.type, r.id, r.tenantId ?? "", r.owner ?? null, JSON.stringify(r.attributes ?? {})],
  );
}

export function sqlResourceResolver(store: SqlStore): ResourceResolver {
  return {
    async resolve({ type, id, tenantId }) {
      if (id === undefined) return null;
      const [row] = await store.query<{ tenant_id: string; owner: string | null; attributes: string }>("SELECT tenant_id, owner, attributes FROM resources WHERE type = ? AND id = ?", [type, id]);
      if (!row || (tenantId !== undefined && row.tenant_id !== tenantId)) return null;
      const ref: ResourceRef = { ...(JSON.parse(row.attributes) as Record<string, unknown>), id, tenantId: row.tenant_id, type };
      if (row.owner !== null) ref.owner = row.owner;
      return ref;
    },
  };
}

export function sqlAuditSink(store: SqlStore): AuditSink {
  return {
    async record(e: AuditEvent) {
      await store.execute("INSERT INTO audit_events (at, event, outcome, actor_id, action, status_code, request_id, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
        e.at,
        e.event,
        e.outcome,
        e.actor?.id ?? null,
        e.action ?? null,
        e.statusCode ?? null,
        e.requestId,
        JSON.stringify(e),
      ]);
    },
  };
}

export interface AuditQuery {
  /** RFC 3339: events at or after it. */
  since?: string;
  actor?: string;
  outcome?: AuditOutcome;
  /** Newest first, at most this many (default 100). */
  limit?: number;
}

export async function queryAudit(store: SqlStore, q: AuditQuery = {}): Promise<AuditEvent[]> {
  const where: string[] = [];
  const args: SqlValue[] = [];
  if (q.since !== undefined) {
    where.push("at >= ?");
    args.push(q.since);
  }
  if (q.actor !== undefined) {
    where.push("actor_id = ?");
    args.push(q.actor);
  }
  if (q.outcome !== undefined) {
    where.push("outcome = ?");
    args.push(q.outcome);
  }
  args.push(q.limit ?? 100);
  const rows = await store.query<{ record: string }>(`SELECT record FROM audit_events ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ?`, args);
  return rows.map((r) => JSON.parse(r.record) as AuditEvent);
}
