/**
 * The session service's schema, as numbered migrations (lib/db/migrate.ts). No foreign keys: the
 * Durable Object's SQLite enforces them and libSQL does not by default, so the cascades are
 * explicit batches in the query modules and behave the same on both. List order is insertion
 * order (`rowid`), so two rows created in the same millisecond still list in the order they came.
 */
import type { Migration } from "#lib/db";

export const SESSION_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "templates, sessions, executions",
    statements: [
      `CREATE TABLE templates (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        engine TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      // One row per template, created with it: the settings document as JSON.
      `CREATE TABLE template_settings (
        template_id TEXT PRIMARY KEY,
        settings TEXT NOT NULL
      )`,
      `CREATE TABLE capabilities (
        id TEXT PRIMARY KEY,
        template_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        config TEXT NOT NULL,
        UNIQUE (template_id, kind, name)
      )`,
      `CREATE TABLE startup_files (
        id TEXT PRIMARY KEY,
        template_id TEXT NOT NULL,
        path TEXT NOT NULL,
        order_index INTEGER NOT NULL,
        mode TEXT NOT NULL,
        UNIQUE (template_id, path)
      )`,
      `CREATE TABLE template_modules (
        template_id TEXT NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (template_id, name)
      )`,
      `CREATE TABLE template_libraries (
        template_id TEXT NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (template_id, name)
      )`,
      `CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        template_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        base_commit_oid TEXT NOT NULL,
        worktree_path TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        closed_at TEXT,
        last_error TEXT
      )`,
      "CREATE INDEX sessions_by_status ON sessions (status)",
      `CREATE TABLE executions (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        input TEXT,
        path TEXT,
        args TEXT NOT NULL,
        env TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        result TEXT,
        error TEXT,
        duration_ms REAL NOT NULL DEFAULT 0,
        event_count INTEGER NOT NULL DEFAULT 0,
        output_bytes INTEGER NOT NULL DEFAULT 0
      )`,
      "CREATE INDEX executions_by_session ON executions (session_id, started_at)",
      "CREATE INDEX executions_by_status ON executions (status)",
      `CREATE TABLE execution_events (
        execution_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        ts TEXT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (execution_id, seq)
      )`,
    ],
  },
];
