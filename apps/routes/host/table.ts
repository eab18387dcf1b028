/**
 * The route table: a script's registrations (data from httpmod) and the host's own routes, each
 * compiled once into its Hono handlers, and the plan table's rows (`routes()`).
 */
import type { Handler } from "hono";
import type { FileTree } from "#lib/files";
import type { StaticDirectory } from "#lib/http";
import type { FetchHandler } from "#lib/runtime";
import type { Target } from "../pipeline/handler.ts";
import type { PipelineEnv } from "../pipeline/state.ts";
import { assetsDirectory, type Registration, staticDirectory } from "../script/script-sandbox.ts";
import type { MountEntry } from "./mounts.ts";
import { compileRoutePlan, type RoutePattern, type RoutePlan } from "../core/plan.ts";
import type { RouteInfo } from "../core/types.ts";

export interface RouteEntry {
  plan?: RoutePlan;
  method: string;
  pattern: RoutePattern;
  rawPattern: string;
  source: "script" | "host";
  at?: string;
  /** What Hono runs for it: a planned route's stages, or a raw handler. */
  handlers: Handler<PipelineEnv>[];
}

export interface ScriptTable {
  mounts: MountEntry[];
  routes: RouteEntry[];
}

interface CompileDeps {
  /** What each mountable and assets token a script was handed stands for. */
  mountTokens: Map<string, FetchHandler>;
  assetTokens: Map<string, StaticDirectory>;
  files?: { tree: FileTree; root: string };
  stages(plan: RoutePlan, target: Target): Handler<PipelineEnv>[];
}

/** `dir`'s subdirectory `clean` (a path resolveRelativePath made, or "" for `dir` itself), still
 * confined to `dir`: a symlink on its way that leads out is 404 (lib/http serveStatic). */
function under(dir: StaticDirectory, clean: string): StaticDirectory {
  const base = [dir.base, clean].filter((part) => part !== undefined && part !== "").join("/");
  return base === "" ? { tree: dir.tree, root: dir.root } : { tree: dir.tree, root: dir.root, base };
}

/** `dir`'s subdirectory `rel` (already checked by staticDirectory in the sandbox: re-checked). */
function below(dir: StaticDirectory, rel: string): StaticDirectory {
  return under(dir, staticDirectory(rel, "static directory"));
}

export function plannedEntry(
  plan: RoutePlan & { parsed: RoutePattern },
  target: Target,
  source: "script" | "host",
  deps: Pick<CompileDeps, "stages">,
): RouteEntry {
  const at = target.kind === "host" ? undefined : target.at;
  return { plan, method: plan.method, pattern: plan.parsed, rawPattern: plan.pattern, source, at, handlers: deps.stages(plan, target) };
}

export function compileRegistrations(registrations: Registration[], deps: CompileDeps): ScriptTable {
  const mounts: MountEntry[] = [];
  const routes: RouteEntry[] = [];
  const mountable = (token: string, at: string) => {
    const handler = deps.mountTokens.get(token);
    if (!handler) throw new Error(`${at}: unknown mountable`);
    return handler;
  };
  for (const r of registrations) {
    switch (r.kind) {
      case "route": {
        routes.push(plannedEntry(compileRoutePlan(r.plan), { kind: "script", handler: r.handler, at: r.at }, "script", deps));
        break;
      }
      case "guardedMount": {
        const plan = compileRoutePlan(r.plan);
        // The literal part before "/*": the mount's prefix (what stripPrefix removes).
        const prefix = plan.parsed.path.endsWith("/*") ? plan.parsed.path.slice(0, -2) || "/" : plan.parsed.path;
        routes.push(plannedEntry(plan, { kind: "mount", handler: mountable(r.mountable, r.at), prefix, strip: r.stripPrefix, at: r.at }, "script", deps));
        break;
      }
      case "mount":
        mounts.push({
          kind: "mount",
          prefix: r.prefix,
          handler: mountable(r.mountable, r.at),
          stripPrefix: r.stripPrefix,
          excludePrefixes: r.excludePrefixes,
          at: r.at,
        });
        break;
      case "static":
        if (!deps.files) throw new Error(`${r.at}: app.static is not available on this host`);
        mounts.push({ kind: "static", prefix: r.prefix, dir: below(deps.files, r.directory), excludePrefixes: [], at: r.at });
        break;
      case "assets": {
        const dir = deps.assetTokens.get(r.assets);
        if (!dir) throw new Error(`${r.at}: unknown assets module`);
        // The root is checked in the sandbox against the module's own root (assetsDirectory): re-checked.
        const entry: MountEntry = {
          kind: "static",
          prefix: r.prefix,
          dir: under(dir, assetsDirectory(r.root, "", "assets root")),
          excludePrefixes: r.excludePrefixes,
          at: r.at,
        };
        if (r.spa) entry.spaIndex = r.spa.index;
        mounts.push(entry);
        break;
      }
    }
  }
  return { mounts, routes };
}

/** The plan table, one row a mount or route, in the order they are matched. */
export function routeRows(mounts: MountEntry[], routes: RouteEntry[]): RouteInfo[] {
  const rows: RouteInfo[] = [];
  for (const m of mounts) {
    const row: RouteInfo = { kind: m.kind, pattern: m.prefix, access: m.kind, source: "script", at: m.at };
    if (m.excludePrefixes.length > 0) row.excludePrefixes = m.excludePrefixes;
    if (m.kind === "static" && m.spaIndex !== undefined) row.spaIndex = m.spaIndex;
    rows.push(row);
  }
  for (const r of routes) {
    if (!r.plan) {
      rows.push({ kind: "route", method: r.method, pattern: r.rawPattern, access: "raw", source: r.source });
      continue;
    }
    const p = r.plan;
    const row: RouteInfo = {
      kind: "route",
      method: p.method,
      pattern: p.pattern,
      name: p.name,
      access: p.public ? "public" : p.auth?.required ? "auth" : "auth?",
      resources: p.resources.map((x) => x.type),
      csrf: p.csrf,
      source: r.source,
    };
    if (p.action !== undefined) row.action = p.action;
    if (p.audit !== undefined) row.audit = p.audit;
    const mustExist = p.resources.filter((x) => x.mustExist).map((x) => x.type);
    if (mustExist.length > 0) row.mustExist = mustExist;
    if (p.rateLimits) row.rateLimits = p.rateLimits;
    if (r.at) row.at = r.at;
    rows.push(row);
  }
  return rows;
}
