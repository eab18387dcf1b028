/**
 * The module catalog of a session: which native modules its sandbox gets, configured from the
 * template's modules and capabilities at session setup (docs/sessions-runtime.md):
 *
 * - `modules` (template): the catalog names the session may `require`/`import`. Nothing else is
 *   reachable; built-ins (JSON, Math, console, ...) are not modules.
 * - `module` capability (name = a module): `enabled: false` withdraws that module; enabled, its
 *   `config` configures it (http: `max_response_kb`, `max_redirects`, `timeout_ms`).
 * - `global` capability (name = a module): enabled, the module is also the global of that name.
 * - `fs` capability: enabled, `fs` may write under the directory its name gives ("." = all).
 * - `net` capability: enabled, `http` may reach the host pattern its name gives.
 * - `env` capability: enabled, the variable (or `PREFIX_*`) its name gives is visible through
 *   the `env` module and run-file's `env` global.
 */
import type { NativeModule, NativeModuleSource } from "#lib/sandbox";
import { type CapabilityKind, LiveRuntimeError, type LiveRuntimeOptions, MODULE_CATALOG, type ModuleName, type SessionSpec } from "../types.ts";
import { envModule, visibleEnv } from "./env.ts";
import { fsModule, writableDirectories } from "./fs.ts";
import { httpModule, parseNetRule } from "./http.ts";
import { pathModule } from "./path.ts";

interface SessionCatalog {
  /** Built on first `require`, so idle sessions pay nothing for them. */
  modules: Record<string, NativeModuleSource>;
  /** Global name -> module name. */
  moduleGlobals: Record<string, string>;
  /** Host variables the session may see. */
  env: Record<string, string>;
  /** Why a bare name is not a module of this session, for `Cannot find module`: see missingModuleReason. */
  missingModule: (name: string) => string | undefined;
}

/** What each catalog module also needs to do its work, past being enabled. */
const ALSO_NEEDS: Partial<Record<ModuleName, string>> = {
  http: '; to reach a host it also needs a net capability naming it ({kind: "net", name: "api.example.com"})',
  fs: '; to write it also needs an fs capability naming a directory ({kind: "fs", name: "."})',
  env: '; it shows only the variables an env capability names ({kind: "env", name: "API_URL"})',
};

/**
 * Why `require(name)` finds no module in this session, in words that say how to enable it: a
 * catalog module the template does not list, or withdraws with a disabled `module` capability, or
 * that this server does not offer. Undefined for names that are not catalog modules (files).
 */
function missingModuleReason(name: string, spec: Pick<SessionSpec, "modules" | "capabilities">, offered: ReadonlySet<string>): string | undefined {
  if (!(MODULE_CATALOG as readonly string[]).includes(name)) return undefined;
  if (!offered.has(name)) return `this server does not offer the module "${name}" (its modules: ${[...offered].join(", ") || "none"})`;
  const newSession = "then start a new session (a running session keeps the modules it started with)";
  const also = ALSO_NEEDS[name as ModuleName] ?? "";
  if (spec.modules.includes(name)) {
    return `the module "${name}" is withdrawn for this session's template by its disabled module capability "${name}": enable that capability ` +
      `(or remove it), ${newSession}${also}`;
  }
  return `the module "${name}" is not enabled for this session's template: add it to the template's modules ` +
    `(POST /api/v1/templates/<template id>/modules {"name": "${name}"}, or Add module in the web UI), ${newSession}${also}`;
}

const MiB = 1024 * 1024;
const DEFAULT_MAX_RESPONSE_KB = 1024;
const DEFAULT_MAX_REDIRECTS = 5;

const setupError = (message: string) => new LiveRuntimeError("STARTUP_FAILED", message);

function numberSetting(config: Record<string, unknown>, key: string, fallback: number, module: string): number {
  const v = config[key];
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw setupError(`module capability "${module}": config.${key} must be a non-negative number`);
  return v;
}

export function sessionCatalog(spec: SessionSpec, options: LiveRuntimeOptions): SessionCatalog {
  const enabled = (kind: CapabilityKind) => spec.capabilities.filter((c) => c.kind === kind && c.enabled);
  const allowed = new Set<string>(options.modules ?? MODULE_CATALOG);
  const withdrawn = new Set(spec.capabilities.filter((c) => c.kind === "module" && !c.enabled).map((c) => c.name));
  const config = new Map(enabled("module").map((c) => [c.name, c.config] as const));
  const env = visibleEnv(options.hostEnv ?? {}, enabled("env").map((c) => c.name));
  const limits = spec.settings.limits;

  // Each builder checks its capabilities now (a bad one fails the setup) and returns the module's
  // maker.
  const build: Record<ModuleName, (config: Record<string, unknown>) => () => NativeModule> = {
    path: () => pathModule,
    env: () => () => envModule(env),
    fs: () => {
      let writable: string[];
      try {
        writable = writableDirectories(enabled("fs").map((c) => c.name));
      } catch (err) {
        throw setupError(`fs capability: ${(err as Error).message}`);
      }
      return () => fsModule({ tree: options.worktrees, root: spec.worktreePath, writable, maxReadChars: limits.mem_mb * MiB });
    },
    http: (c) => {
      const rules = enabled("net").map((cap) => {
        const rule = parseNetRule(cap.name);
        if (!rule) throw setupError(`net capability "${cap.name}": expected host, host:port or *.domain`);
        return rule;
      });
      const settings = {
        rules,
        fetch: options.fetch ?? ((input, init) => fetch(input, init)),
        timeoutMs: Math.min(numberSetting(c, "timeout_ms", limits.wall_ms, "http"), limits.wall_ms),
        maxResponseBytes: numberSetting(c, "max_response_kb", DEFAULT_MAX_RESPONSE_KB, "http") * 1024,
        maxRedirects: numberSetting(c, "max_redirects", DEFAULT_MAX_REDIRECTS, "http"),
      };
      return () => httpModule(settings);
    },
  };

  const modules: Record<string, NativeModuleSource> = {};
  for (const name of spec.modules) {
    if (!allowed.has(name) || !Object.hasOwn(build, name)) throw setupError(`module "${name}" is not in this server's module catalog`);
    if (withdrawn.has(name)) continue;
    modules[name] = build[name as ModuleName](config.get(name) ?? {});
  }
  const moduleGlobals: Record<string, string> = {};
  for (const cap of enabled("global")) {
    if (!Object.hasOwn(modules, cap.name)) throw setupError(`global capability "${cap.name}": the template has no enabled module of that name`);
    moduleGlobals[cap.name] = cap.name;
  }
  return { modules, moduleGlobals, env, missingModule: (name) => missingModuleReason(name, spec, allowed) };
}
