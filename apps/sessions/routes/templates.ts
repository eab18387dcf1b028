/** /templates and the resources under a template. */
import type { ServiceContext } from "../domain/context.ts";
import * as templates from "../domain/templates.ts";
import type { ApiRouter } from "./api.ts";
import { CapabilityBody, CreateTemplateBody, NameBody, SettingsPatchBody, StartupFileBody } from "./schemas.ts";

const TAG = "templates";
const ID = { template_id: "uuid" } as const;

export function registerTemplates(router: ApiRouter, ctx: ServiceContext): void {
  router.add(
    {
      method: "post",
      path: "/templates",
      tag: TAG,
      summary: "Create a template (with default settings)",
      body: CreateTemplateBody,
      response: { status: 201, description: "The template", schema: "Template" },
      errors: ["CONFLICT"],
    },
    async (c, { body }) => c.json(await templates.createTemplate(ctx, body), 201),
  );

  router.add(
    {
      method: "get",
      path: "/templates",
      tag: TAG,
      summary: "List templates, oldest first",
      response: { status: 200, description: "All templates", schema: ["Template"] },
      errors: [],
    },
    async (c) => c.json(await templates.listTemplates(ctx)),
  );

  router.add(
    {
      method: "get",
      path: "/templates/{template_id}",
      tag: TAG,
      summary: "A template with its settings, capabilities, startup files, modules and libraries",
      params: ID,
      response: { status: 200, description: "The template detail", schema: "TemplateDetail" },
      errors: ["TEMPLATE_NOT_FOUND"],
    },
    async (c, { params }) => c.json(await templates.templateDetail(ctx, params.template_id)),
  );

  router.add(
    {
      method: "delete",
      path: "/templates/{template_id}",
      tag: TAG,
      summary: "Delete a template and everything it owns",
      description: "Settings, capabilities, startup files, modules and libraries go with it. Sessions made from it stay.",
      params: ID,
      response: { status: 204, description: "Deleted" },
      errors: ["TEMPLATE_NOT_FOUND"],
    },
    async (c, { params }) => {
      await templates.deleteTemplate(ctx, params.template_id);
      return c.body(null, 204);
    },
  );

  router.add(
    {
      method: "get",
      path: "/templates/{template_id}/settings",
      tag: TAG,
      summary: "The template's settings (beyond the spec)",
      params: ID,
      response: { status: 200, description: "The settings", schema: "Settings" },
      errors: ["TEMPLATE_NOT_FOUND"],
    },
    async (c, { params }) => c.json(await templates.getSettings(ctx, params.template_id)),
  );

  router.add(
    {
      method: "patch",
      path: "/templates/{template_id}/settings",
      tag: TAG,
      summary: "Change some settings (beyond the spec)",
      description: "A partial settings document, merged into the stored one group by group; lists replace. Sessions created afterwards use the new settings.",
      params: ID,
      body: SettingsPatchBody,
      response: { status: 200, description: "The settings after the change", schema: "Settings" },
      errors: ["TEMPLATE_NOT_FOUND"],
    },
    async (c, { params, body }) => c.json(await templates.patchSettings(ctx, params.template_id, body)),
  );

  router.add(
    {
      method: "post",
      path: "/templates/{template_id}/capabilities",
      tag: TAG,
      summary: "Add a capability",
      params: ID,
      body: CapabilityBody,
      response: { status: 201, description: "The capability", schema: "Capability" },
      errors: ["TEMPLATE_NOT_FOUND", "CONFLICT"],
    },
    async (c, { params, body }) => c.json(await templates.addCapability(ctx, params.template_id, body), 201),
  );

  router.add(
    {
      method: "get",
      path: "/templates/{template_id}/capabilities",
      tag: TAG,
      summary: "List the template's capabilities, in the order added",
      params: ID,
      response: { status: 200, description: "Capabilities", schema: ["Capability"] },
      errors: ["TEMPLATE_NOT_FOUND"],
    },
    async (c, { params }) => c.json(await templates.listCapabilities(ctx, params.template_id)),
  );

  router.add(
    {
      method: "post",
      path: "/templates/{template_id}/startup-files",
      tag: TAG,
      summary: "Add a startup file",
      description: "`path` is relative to the future session worktree and stored normalized; `mode` must be eval.",
      params: ID,
      body: StartupFileBody,
      response: { status: 201, description: "The startup file", schema: "StartupFile" },
      errors: ["TEMPLATE_NOT_FOUND", "INVALID_PATH", "STARTUP_MODE_UNSUPPORTED", "CONFLICT"],
    },
    async (c, { params, body }) => c.json(await templates.addStartupFile(ctx, params.template_id, body), 201),
  );

  router.add(
    {
      method: "get",
      path: "/templates/{template_id}/startup-files",
      tag: TAG,
      summary: "List startup files by ascending order_index (ties: the order added)",
      params: ID,
      response: { status: 200, description: "Startup files", schema: ["StartupFile"] },
      errors: ["TEMPLATE_NOT_FOUND"],
    },
    async (c, { params }) => c.json(await templates.listStartupFiles(ctx, params.template_id)),
  );

  for (const kind of ["module", "library"] as const) registerEntries(router, ctx, kind);
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
function registerEntries(router: ApiRouter, ctx: ServiceContext, kind: templates.EntryKind): void {
  const text = ENTRY_TEXT[kind];
  const base = `/templates/{template_id}/${text.plural}`;
  router.add(
    {
      method: "post",
      path: base,
      tag: TAG,
      summary: text.add,
      params: ID,
      body: NameBody,
      response: { status: 201, description: `The ${kind}`, schema: "TemplateEntry" },
      errors: ["TEMPLATE_NOT_FOUND", ...text.addErrors, "CONFLICT"],
    },
    async (c, { params, body }) => c.json(await templates.addEntry(ctx, kind, params.template_id, body.name), 201),
  );
  router.add(
    {
      method: "get",
      path: base,
      tag: TAG,
      summary: `List the template's ${text.plural}, in the order added`,
      params: ID,
      response: { status: 200, description: text.plural, schema: ["TemplateEntry"] },
      errors: ["TEMPLATE_NOT_FOUND"],
    },
    async (c, { params }) => c.json(await templates.listEntries(ctx, kind, params.template_id)),
  );
  router.add(
    {
      method: "delete",
      path: `${base}/{name}`,
      tag: TAG,
      summary: `Remove a ${kind} from the template`,
      params: { ...ID, name: "name" },
      response: { status: 204, description: "Removed" },
      errors: ["TEMPLATE_NOT_FOUND", text.missing],
    },
    async (c, { params }) => {
      await templates.removeEntry(ctx, kind, params.template_id, params.name);
      return c.body(null, 204);
    },
  );
}
