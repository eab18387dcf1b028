/**
 * The route host's SQL store (lib/db: an embedded libSQL file, `:memory:`, or a libSQL server):
 * resources the ResourceResolver reads, and the audit events an AuditSink writes, with the query
 * behind `routes audit`.
 *
 * Signed-in sessions live here too when the host has a database (`sqlSignedInStore`), with the
 * key that signs the session cookie (`persistedSessionSecret`), so a restart signs nobody out.
 *
 * A resource is (type, id) with a tenant, an owner and JSON attributes; the ResourceRef a handler
 * sees is `{id, tenantId, type, owner?, ...attributes}`. A resource asked for under another tenant
 * (`tenantFromParam`) is not found, so a URL never tells whether another tenant's resource exists.
 */
import { applyMigrations, type Migration, type SqlStore, type SqlValue } from "#lib/db";
import { sha256Base64url } from "#lib/oauth";
import type { SignedInSession, SignedInStore } from "../auth/signed-in.ts";
import type { AuditEvent, AuditOutcome, AuditSink, ResourceRef, ResourceResolver } from "../core/services.ts";
import { RATE_LIMIT_MIGRATION_STATEMENTS } from "./rate-limits.ts";

const ROUTES_MIGRATIONS: readonly Migration[] = [
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
  {
    version: 2,
    name: "signed-in sessions and host settings",
    statements: [
      // Keyed by a hash of the session id: the table alone does not let anyone take a session.
      `CREATE TABLE signed_in_sessions (
        id_hash TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      )`,
      "CREATE INDEX signed_in_sessions_expires ON signed_in_sessions (expires_at)",
      "CREATE TABLE host_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
  },
  { version: 3, name: "rate-limit counters", statements: RATE_LIMIT_MIGRATION_STATEMENTS },
];

export const prepareRoutesStore = (store: SqlStore) => applyMigrations(store, ROUTES_MIGRATIONS);

interface StoredResource {
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

type ResourceRow = { type: string; id: string; tenant_id: string; owner: string | null; attributes: string };

const toRef = (row: ResourceRow): ResourceRef => {
  const ref: ResourceRef = { ...(JSON.parse(row.attributes) as Record<string, unknown>), id: row.id, tenantId: row.tenant_id, type: row.type };
  if (row.owner !== null) ref.owner = row.owner;
  return ref;
};

export async function getResource(store: SqlStore, type: string, id: string): Promise<ResourceRef | undefined> {
  const [row] = await store.query<ResourceRow>("SELECT type, id, tenant_id, owner, attributes FROM resources WHERE type = ? AND id = ?", [type, id]);
  return row && toRef(row);
}

/** A type's resources, newest created first, optionally of one tenant or owner. */
export async function listResources(store: SqlStore, type: string, q: { tenantId?: string; owner?: string; limit?: number } = {}): Promise<ResourceRef[]> {
  const where = ["type = ?"];
  const args: SqlValue[] = [type];
  if (q.tenantId !== undefined) {
    where.push("tenant_id = ?");
    args.push(q.tenantId);
  }
  if (q.owner !== undefined) {
    where.push("owner = ?");
    args.push(q.owner);
  }
  args.push(q.limit ?? 100);
  const rows = await store.query<ResourceRow>(
    `SELECT type, id, tenant_id, owner, attributes FROM resources WHERE ${where.join(" AND ")} ORDER BY rowid DESC LIMIT ?`,
    args,
  );
  return rows.map(toRef);
}

/** True when there was such a resource. */
export async function deleteResource(store: SqlStore, type: string, id: string): Promise<boolean> {
  return (await store.execute("DELETE FROM resources WHERE type = ? AND id = ?", [type, id])).changes > 0;
}

export function sqlResourceResolver(store: SqlStore): ResourceResolver {
  return {
    async resolve({ type, id, tenantId }) {
      if (id === undefined) return null;
      const ref = await getResource(store, type, id);
      if (!ref || (tenantId !== undefined && ref.tenantId !== tenantId)) return null;
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

interface AuditQuery {
  /** RFC 3339: events at or after it. */
  since?: string;
  actor?: string;
  outcome?: AuditOutcome;
  /** Events about this resource (the first declared one); `type` optional. */
  resource?: { type?: string; id: string };
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
  if (q.resource !== undefined) {
    where.push("json_extract(record, '$.resource.id') = ?");
    args.push(q.resource.id);
    if (q.resource.type !== undefined) {
      where.push("json_extract(record, '$.resource.type') = ?");
      args.push(q.resource.type);
    }
  }
  args.push(q.limit ?? 100);
  const rows = await store.query<{ record: string }>(
    `SELECT record FROM audit_events ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ?`,
    args,
  );
  return rows.map((r) => JSON.parse(r.record) as AuditEvent);
}

/** Signed-in sessions in the SQL store; expired rows are pruned as new ones are written. */
export function sqlSignedInStore(store: SqlStore, now: () => number = Date.now): SignedInStore {
  return {
    async get(id) {
      const [row] = await store.query<{ record: string }>("SELECT record FROM signed_in_sessions WHERE id_hash = ? AND expires_at > ?", [
        await sha256Base64url(id),
        now(),
      ]);
      return row && (JSON.parse(row.record) as SignedInSession);
    },
    async put(id, session) {
      await store.batch([
        { sql: "DELETE FROM signed_in_sessions WHERE expires_at <= ?", args: [now()] },
        {
          sql: "INSERT OR REPLACE INTO signed_in_sessions (id_hash, record, expires_at) VALUES (?, ?, ?)",
          args: [await sha256Base64url(id), JSON.stringify(session), session.expires],
        },
      ]);
    },
    async delete(id) {
      await store.execute("DELETE FROM signed_in_sessions WHERE id_hash = ?", [await sha256Base64url(id)]);
    },
  };
}

/** The key signing the session cookie, made once and kept in the store, so cookies (and the
 * sessions they name) outlive a restart; of two instances creating it at once, the first wins. */
export async function persistedSessionSecret(store: SqlStore, fresh: () => string): Promise<string> {
  await store.execute("INSERT OR IGNORE INTO host_settings (key, value) VALUES ('session_secret', ?)", [fresh()]);
  const [row] = await store.query<{ value: string }>("SELECT value FROM host_settings WHERE key = 'session_secret'");
  return row!.value;
}
