/** /templates and the resources under a template. */
import type { Hono } from "hono";
import * as v from "valibot";
import type { ServiceContext } from "../domain/context.ts";
import * as templates from "../domain/templates.ts";
import { describe, json, noQuery, params } from "./api.ts";
import {
  CapabilityBody,
  CapabilitySchema,
  CreateTemplateBody,
  NameBody,
  SettingsPatchBody,
  SettingsSchema,
  StartupFileBody,
  StartupFileSchema,
  TemplateDetailSchema,
  TemplateEntrySchema,
  TemplateParams,
  TemplateSchema,
} from "./schemas.ts";

const TAG = "templates";

export function registerTemplates(routes: Hono, ctx: ServiceContext): void {
  routes.post(
    "/templates",
    describe({
      tag: TAG,
      summary: "Create a template (with default settings)",
      response: { status: 201, description: "The template", schema: TemplateSchema },
      errors: ["CONFLICT"],
    }),
    noQuery,
    json(CreateTemplateBody),
    async (c) => c.json(await templates.createTemplate(ctx, c.req.valid("json")), 201),
  );

  routes.get(
    "/templates",
    describe({
      tag: TAG,
      summary: "List templates, oldest first",
      response: { status: 200, description: "All templates", schema: v.array(TemplateSchema) },
      errors: [],
    }),
    noQuery,
    async (c) => c.json(await templates.listTemplates(ctx)),
  );

  routes.get(
    "/templates/:template_id",
    describe({
      tag: TAG,
      summary: "A template with its settings, capabilities, startup files, modules and libraries",
      response: { status: 200, description: "The template detail", schema: TemplateDetailSchema },
      errors: ["TEMPLATE_NOT_FOUND"],
    }),
    params(TemplateParams),
    noQuery,
    async (c) => c.json(await templates.templateDetail(ctx, c.req.valid("param").template_id)),
  );

  routes.delete(
    "/templates/:template_id",
    describe({
      tag: TAG,
      summary: "Delete a template and everything it owns",
      description: "Settings, capabilities, startup files, modules and libraries go with it. Sessions made from it stay.",
      response: { status: 204, description: "Deleted" },
      errors: ["TEMPLATE_NOT_FOUND"],
    }),
    params(TemplateParams),
    noQuery,
    async (c) => {
      await templates.deleteTemplate(ctx, c.req.valid("param").template_id);
      return c.body(null, 204);
    },
  );

  routes.get(
    "/templates/:template_id/settings",
    describe({
      tag: TAG,
      summary: "The template's settings (beyond the spec)",
      response: { status: 200, description: "The settings", schema: SettingsSchema },
      errors: ["TEMPLATE_NOT_FOUND"],
    }),
    params(TemplateParams),
    noQuery,
    async (c) => c.json(await templates.getSettings(ctx, c.req.valid("param").template_id)),
  );

  routes.patch(
    "/templates/:template_id/settings",
    describe({
      tag: TAG,
      summary: "Change some settings (beyond the spec)",
      description: "A partial settings document, merged into the stored one group by group; lists replace. Sessions created afterwards use the new settings.",
      response: { status: 200, description: "The settings after the change", schema: SettingsSchema },
      errors: ["TEMPLATE_NOT_FOUND"],
    }),
    params(TemplateParams),
    noQuery,
    json(SettingsPatchBody),
    async (c) => c.json(await templates.patchSettings(ctx, c.req.valid("param").template_id, c.req.valid("json"))),
  );

  routes.post(
    "/templates/:template_id/capabilities",
    describe({
      tag: TAG,
      summary: "Add a capability",
      response: { status: 201, description: "The capability", schema: CapabilitySchema },
      errors: ["TEMPLATE_NOT_FOUND", "CONFLICT"],
    }),
    params(TemplateParams),
    noQuery,
    json(CapabilityBody),
    async (c) => c.json(await templates.addCapability(ctx, c.req.valid("param").template_id, c.req.valid("json")), 201),
  );

  routes.get(
    "/templates/:template_id/capabilities",
    describe({
      tag: TAG,
      summary: "List the template's capabilities, in the order added",
      response: { status: 200, description: "Capabilities", schema: v.array(CapabilitySchema) },
      errors: ["TEMPLATE_NOT_FOUND"],
    }),
    params(TemplateParams),
    noQuery,
    async (c) => c.json(await templates.listCapabilities(ctx, c.req.valid("param").template_id)),
  );

  routes.post(
    "/templates/:template_id/startup-files",
    describe({
      tag: TAG,
      summary: "Add a startup file",
      description: "`path` is relative to the future session worktree and stored normalized; `mode` must be eval.",
      response: { status: 201, description: "The startup file", schema: StartupFileSchema },
      errors: ["TEMPLATE_NOT_FOUND", "INVALID_PATH", "STARTUP_MODE_UNSUPPORTED", "CONFLICT"],
    }),
    params(TemplateParams),
    noQuery,
    json(StartupFileBody),
    async (c) => c.json(await templates.addStartupFile(ctx, c.req.valid("param").template_id, c.req.valid("json")), 201),
  );

  routes.get(
    "/templates/:template_id/startup-files",
    describe({
      tag: TAG,
      summary: "List startup files by ascending order_index (ties: the order added)",
      response: { status: 200, description: "Startup files", schema: v.array(StartupFileSchema) },
      errors: ["TEMPLATE_NOT_FOUND"],
    }),
    params(TemplateParams),
    noQuery,
    async (c) => c.json(await templates.listStartupFiles(ctx, c.req.valid("param").template_id)),
  );

  for (const kind of ["module", "library"] as const) registerEntries(routes, ctx, kind);
}

const ENTRY_TEXT = {
  module: {
    plural: "modules",
    add: "Add a host module from the catalog",
    addErrors: ["MODULE_NOT_ALLOWED"],
    missing: "MODULE_NOT_FOUND",
  },
  library: {
    plural: "libraries",
    add: "Add a library from the library directory",
    addErrors: ["LIBRARY_NOT_AVAILABLE", "INVALID_PATH"],
    missing: "LIBRARY_NOT_FOUND",
  },
} as const;

/** Modules and libraries: the same three operations on a name. */
function registerEntries(routes: Hono, ctx: ServiceContext, kind: templates.EntryKind): void {
  const text = ENTRY_TEXT[kind];
  const base = `/templates/:template_id/${text.plural}`;
  routes.post(
    base,
    describe({
      tag: TAG,
      summary: text.add,
      response: { status: 201, description: `The ${kind}`, schema: TemplateEntrySchema },
      errors: ["TEMPLATE_NOT_FOUND", ...text.addErrors, "CONFLICT"],
    }),
    params(TemplateParams),
    noQuery,
    json(NameBody),
    async (c) => c.json(await templates.addEntry(ctx, kind, c.req.valid("param").template_id, c.req.valid("json").name), 201),
  );
  routes.get(
    base,
    describe({
      tag: TAG,
      summary: `List the template's ${text.plural}, in the order added`,
      response: { status: 200, description: text.plural, schema: v.array(TemplateEntrySchema) },
      errors: ["TEMPLATE_NOT_FOUND"],
    }),
    params(TemplateParams),
    noQuery,
    async (c) => c.json(await templates.listEntries(ctx, kind, c.req.valid("param").template_id)),
  );
  // `name` is any non-empty path segment (the router matches no empty one): not validated further.
  routes.delete(
    `${base}/:name`,
    describe({
      tag: TAG,
      summary: `Remove a ${kind} from the template`,
      response: { status: 204, description: "Removed" },
      errors: ["TEMPLATE_NOT_FOUND", text.missing],
    }),
    params(TemplateParams),
    noQuery,
    async (c) => {
      await templates.removeEntry(ctx, kind, c.req.valid("param").template_id, c.req.param("name")!);
      return c.body(null, 204);
    },
  );
}
