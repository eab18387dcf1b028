/**
 * Templates and their parts. Every function checks what the request refers to (404), then what
 * it asks for (422), then stores; a duplicate key is 409 CONFLICT. Inputs arrive validated in
 * shape by the route schemas.
 */
import type { CapabilityKind } from "../live/types.ts";
import * as db from "../store/templates.ts";
import type { ServiceContext } from "./context.ts";
import { conflict, SessionServiceError, templateNotFound } from "./errors.ts";
import { checkRelativePath } from "./files.ts";
import { checkLibraryAvailable } from "./libraries.ts";
import { checkModuleAllowed } from "./modules.ts";
import { type CapabilityRecord, type StartupFileRecord, type TemplateDetail, type TemplateEntryRecord, type TemplateRecord, timestamp } from "./records.ts";
import { defaultSettings, mergeSettings, type Settings, type SettingsPatch } from "./settings.ts";

export async function createTemplate(ctx: ServiceContext, input: { name: string; engine?: string }): Promise<TemplateRecord> {
  const now = timestamp(ctx.clock());
  const template: TemplateRecord = { id: ctx.newId(), name: input.name, engine: input.engine ?? "jsengine", created_at: now, updated_at: now };
  if (!(await db.insertTemplate(ctx.store, template, defaultSettings()))) throw conflict(`a template named ${JSON.stringify(input.name)} exists`);
  return template;
}

export const listTemplates = (ctx: ServiceContext) => db.listTemplates(ctx.store);

export async function requireTemplate(ctx: ServiceContext, id: string): Promise<TemplateRecord> {
  const template = await db.getTemplate(ctx.store, id);
  if (!template) throw templateNotFound(id);
  return template;
}

export async function templateDetail(ctx: ServiceContext, id: string): Promise<TemplateDetail> {
  const template = await requireTemplate(ctx, id);
  const [settings, capabilities, startup_files, modules, libraries] = await Promise.all([
    db.getSettings(ctx.store, id),
    db.listCapabilities(ctx.store, id),
    db.listStartupFiles(ctx.store, id),
    db.listEntries(ctx.store, "template_modules", id),
    db.listEntries(ctx.store, "template_libraries", id),
  ]);
  return { ...template, settings: settings ?? defaultSettings(), capabilities, startup_files, modules, libraries };
}

export async function deleteTemplate(ctx: ServiceContext, id: string): Promise<void> {
  if (!(await db.deleteTemplate(ctx.store, id))) throw templateNotFound(id);
}

export async function getSettings(ctx: ServiceContext, id: string): Promise<Settings> {
  await requireTemplate(ctx, id);
  return (await db.getSettings(ctx.store, id)) ?? defaultSettings();
}

export async function patchSettings(ctx: ServiceContext, id: string, patch: SettingsPatch): Promise<Settings> {
  const merged = mergeSettings(await getSettings(ctx, id), patch);
  await db.updateSettings(ctx.store, id, merged, timestamp(ctx.clock()));
  return merged;
}

export async function addCapability(
  ctx: ServiceContext,
  templateId: string,
  input: { kind: CapabilityKind; name: string; enabled?: boolean; config?: Record<string, unknown> },
): Promise<CapabilityRecord> {
  await requireTemplate(ctx, templateId);
  const capability: CapabilityRecord = {
    id: ctx.newId(),
    template_id: templateId,
    kind: input.kind,
    name: input.name,
    enabled: input.enabled ?? false,
    config: input.config ?? {},
  };
  if (!(await db.insertCapability(ctx.store, capability, timestamp(ctx.clock())))) {
    throw conflict(`the template has a ${input.kind} capability named ${JSON.stringify(input.name)}`);
  }
  return capability;
}

export async function listCapabilities(ctx: ServiceContext, templateId: string): Promise<CapabilityRecord[]> {
  await requireTemplate(ctx, templateId);
  return db.listCapabilities(ctx.store, templateId);
}

/** The path is checked as a string now (the worktree is not known yet) and stored normalized. */
export async function addStartupFile(
  ctx: ServiceContext,
  templateId: string,
  input: { path: string; order_index?: number; mode?: string },
): Promise<StartupFileRecord> {
  await requireTemplate(ctx, templateId);
  const path = checkRelativePath(input.path, { path: input.path });
  const mode = input.mode ?? "eval";
  if (mode !== "eval") {
    throw new SessionServiceError("STARTUP_MODE_UNSUPPORTED", `startup mode ${JSON.stringify(mode)} is not supported; the only mode is "eval"`, { mode });
  }
  const file: StartupFileRecord = { id: ctx.newId(), template_id: templateId, path, order_index: input.order_index ?? 0, mode };
  if (!(await db.insertStartupFile(ctx.store, file, timestamp(ctx.clock())))) throw conflict(`the template already runs ${path} at startup`);
  return file;
}

export async function listStartupFiles(ctx: ServiceContext, templateId: string): Promise<StartupFileRecord[]> {
  await requireTemplate(ctx, templateId);
  return db.listStartupFiles(ctx.store, templateId);
}

/** Modules and libraries: a name on a template, each with its own admission check. */
export type EntryKind = "module" | "library";
const TABLE: Record<EntryKind, db.EntryTable> = { module: "template_modules", library: "template_libraries" };
const MISSING = { module: "MODULE_NOT_FOUND", library: "LIBRARY_NOT_FOUND" } as const;

export async function addEntry(ctx: ServiceContext, kind: EntryKind, templateId: string, name: string): Promise<TemplateEntryRecord> {
  await requireTemplate(ctx, templateId);
  if (kind === "module") checkModuleAllowed(name, ctx.modules);
  else await checkLibraryAvailable(ctx.libraries, name);
  const entry: TemplateEntryRecord = { template_id: templateId, name };
  if (!(await db.insertEntry(ctx.store, TABLE[kind], entry, timestamp(ctx.clock())))) throw conflict(`the template already has the ${kind} ${name}`);
  return entry;
}

export async function listEntries(ctx: ServiceContext, kind: EntryKind, templateId: string): Promise<TemplateEntryRecord[]> {
  await requireTemplate(ctx, templateId);
  return db.listEntries(ctx.store, TABLE[kind], templateId);
}

export async function removeEntry(ctx: ServiceContext, kind: EntryKind, templateId: string, name: string): Promise<void> {
  await requireTemplate(ctx, templateId);
  if (!(await db.deleteEntry(ctx.store, TABLE[kind], templateId, name, timestamp(ctx.clock())))) {
    throw new SessionServiceError(MISSING[kind], `the template has no ${kind} named ${JSON.stringify(name)}`, { name });
  }
}
