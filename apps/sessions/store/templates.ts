/**
 * Templates and what hangs off them (settings, capabilities, startup files, modules, libraries).
 * A change to anything a template owns also moves the template's `updated_at`, in the same batch.
 * Uniqueness (name; capability kind+name; startup path; module and library names) is the
 * database's: a violation comes back as `undefined`, and the caller says CONFLICT.
 */
import { isUniqueViolation, type SqlRow, type SqlStatement, type SqlStore } from "#lib/db";
import { parseStoredSettings, type Settings } from "../domain/settings.ts";
import type { CapabilityRecord, StartupFileRecord, TemplateEntryRecord, TemplateRecord } from "../domain/records.ts";

const TEMPLATE_COLUMNS = "id, name, engine, created_at, updated_at";

const toTemplate = (r: SqlRow): TemplateRecord => ({
  id: String(r.id),
  name: String(r.name),
  engine: String(r.engine),
  created_at: String(r.created_at),
  updated_at: String(r.updated_at),
});

const toCapability = (r: SqlRow): CapabilityRecord => ({
  id: String(r.id),
  template_id: String(r.template_id),
  kind: String(r.kind) as CapabilityRecord["kind"],
  name: String(r.name),
  enabled: Number(r.enabled) === 1,
  config: JSON.parse(String(r.config)) as Record<string, unknown>,
});

const toStartupFile = (r: SqlRow): StartupFileRecord => ({
  id: String(r.id),
  template_id: String(r.template_id),
  path: String(r.path),
  order_index: Number(r.order_index),
  mode: String(r.mode),
});

const toEntry = (r: SqlRow): TemplateEntryRecord => ({ template_id: String(r.template_id), name: String(r.name) });

/** Runs a batch that inserts a row with a unique key: false when the key was taken. */
async function insertUnique(store: SqlStore, statements: SqlStatement[]): Promise<boolean> {
  try {
    await store.batch(statements);
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

const touch = (templateId: string, at: string): SqlStatement => ({
  sql: "UPDATE templates SET updated_at = ? WHERE id = ?",
  args: [at, templateId],
});

export async function insertTemplate(store: SqlStore, template: TemplateRecord, settings: Settings): Promise<boolean> {
  return insertUnique(store, [
    {
      sql: `INSERT INTO templates (${TEMPLATE_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
      args: [template.id, template.name, template.engine, template.created_at, template.updated_at],
    },
    { sql: "INSERT INTO template_settings (template_id, settings) VALUES (?, ?)", args: [template.id, JSON.stringify(settings)] },
  ]);
}

export async function listTemplates(store: SqlStore): Promise<TemplateRecord[]> {
  return (await store.query(`SELECT ${TEMPLATE_COLUMNS} FROM templates ORDER BY rowid`)).map(toTemplate);
}

export async function getTemplate(store: SqlStore, id: string): Promise<TemplateRecord | undefined> {
  const [row] = await store.query(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE id = ?`, [id]);
  return row && toTemplate(row);
}

/** Deletes the template and everything it owns in one batch; false when there was none. */
export async function deleteTemplate(store: SqlStore, id: string): Promise<boolean> {
  const changes = await store.batch([
    ...["template_settings", "capabilities", "startup_files", "template_modules", "template_libraries"].map((table) => ({
      sql: `DELETE FROM ${table} WHERE template_id = ?`,
      args: [id],
    })),
    { sql: "DELETE FROM templates WHERE id = ?", args: [id] },
  ]);
  return changes.at(-1)! > 0;
}

export async function getSettings(store: SqlStore, templateId: string): Promise<Settings | undefined> {
  const [row] = await store.query("SELECT settings FROM template_settings WHERE template_id = ?", [templateId]);
  return row && parseStoredSettings(String(row.settings));
}

export async function updateSettings(store: SqlStore, templateId: string, settings: Settings, at: string): Promise<void> {
  await store.batch([
    { sql: "UPDATE template_settings SET settings = ? WHERE template_id = ?", args: [JSON.stringify(settings), templateId] },
    touch(templateId, at),
  ]);
}

export async function insertCapability(store: SqlStore, c: CapabilityRecord, at: string): Promise<boolean> {
  return insertUnique(store, [
    {
      sql: "INSERT INTO capabilities (id, template_id, kind, name, enabled, config) VALUES (?, ?, ?, ?, ?, ?)",
      args: [c.id, c.template_id, c.kind, c.name, c.enabled ? 1 : 0, JSON.stringify(c.config)],
    },
    touch(c.template_id, at),
  ]);
}

export async function listCapabilities(store: SqlStore, templateId: string): Promise<CapabilityRecord[]> {
  const rows = await store.query("SELECT * FROM capabilities WHERE template_id = ? ORDER BY rowid", [templateId]);
  return rows.map(toCapability);
}

export async function insertStartupFile(store: SqlStore, f: StartupFileRecord, at: string): Promise<boolean> {
  return insertUnique(store, [
    {
      sql: "INSERT INTO startup_files (id, template_id, path, order_index, mode) VALUES (?, ?, ?, ?, ?)",
      args: [f.id, f.template_id, f.path, f.order_index, f.mode],
    },
    touch(f.template_id, at),
  ]);
}

/** Ascending `order_index`; ties in the order the files were added. */
export async function listStartupFiles(store: SqlStore, templateId: string): Promise<StartupFileRecord[]> {
  const rows = await store.query("SELECT * FROM startup_files WHERE template_id = ? ORDER BY order_index, rowid", [templateId]);
  return rows.map(toStartupFile);
}

/** Modules and libraries share one shape: a name on a template, in the order added. */
export type EntryTable = "template_modules" | "template_libraries";

export async function insertEntry(store: SqlStore, table: EntryTable, entry: TemplateEntryRecord, at: string): Promise<boolean> {
  return insertUnique(store, [
    { sql: `INSERT INTO ${table} (template_id, name) VALUES (?, ?)`, args: [entry.template_id, entry.name] },
    touch(entry.template_id, at),
  ]);
}

export async function listEntries(store: SqlStore, table: EntryTable, templateId: string): Promise<TemplateEntryRecord[]> {
  const rows = await store.query(`SELECT template_id, name FROM ${table} WHERE template_id = ? ORDER BY rowid`, [templateId]);
  return rows.map(toEntry);
}

/** False when the template had no entry of that name. */
export async function deleteEntry(store: SqlStore, table: EntryTable, templateId: string, name: string, at: string): Promise<boolean> {
  const { changes } = await store.execute(`DELETE FROM ${table} WHERE template_id = ? AND name = ?`, [templateId, name]);
  if (changes === 0) return false;
  const t = touch(templateId, at);
  await store.execute(t.sql, t.args);
  return true;
}
