/**
 * One sandbox loaded with a route script: it installs `httpmod` (and the host's mountable and
 * assets modules), evaluates the script once, keeps what it registered, and calls one handler per
 * request. Runtime-free: the in-process runtime (workerd, `--threads 0`) and each pool thread
 * (Node, Deno) use it alike. Everything that crosses is plain data (script-wire.ts).
 *
 * Runs where the sandboxes live: on a request thread, or on the serving thread in process. The
 * main thread takes its types, DEFAULT_SCRIPT_LIMITS, ScriptLoadError (runtime.ts gives a thread's
 * load failure that class again) and the directory checks host/table.ts repeats when it compiles
 * the registrations; `loadScriptSandbox` never runs there in a threaded host.
 */
import { CodedError } from "#lib/errors";
import { createSandbox, type HostValue, type NativeModule, SandboxBrokenError, type SandboxEngine, type SourceResolver } from "#lib/sandbox";
import { resolveRelativePath } from "#lib/files";
import { compileRoutePlan, normalizePrefix } from "../core/plan.ts";
import { HOST_MODULE, HTTPMOD_FILE, HTTPMOD_SOURCE } from "./httpmod-source.ts";
import { type ConsoleLine, DISPATCH_GLOBAL, dispatcherResponse, type DispatchOutcome, isCompactAnswer } from "./script-wire.ts";

export type { DispatchOutcome, ScriptResponse } from "./script-wire.ts";

/** A script and everything it may `require`: files by canonical name ("/app.js"). */
export interface ScriptBundle {
  entry: string;
  files: Record<string, string>;
}

/** What the host installed for scripts, as names and unguessable tokens (plain data). */
export interface ScriptNatives {
  /** `require(module).fn()` returns `{ $mountable: token }`. */
  mountables: Record<string, Record<string, string>>;
  /** `require(module)` returns `{ $assets: token }`. */
  assets: Record<string, string>;
  /** The host has a file tree for `app.static` (directories relative to its root). */
  staticFiles: boolean;
  /** Modules of host functions a handler may call (`require(module)[fn](...)`), by name; the
   * calls go to the host's `ScriptHostCalls` and return promises in the sandbox. */
  services: Record<string, string[]>;
}

/** Runs a script's call of a host service function (`ScriptNatives.services`) on the host. */
export type ScriptHostCalls = (module: string, fn: string, args: HostValue[]) => Promise<HostValue>;

export interface ScriptLimits {
  /** CPU time of one handler call, ms. */
  cpuMs: number;
  /** Wall time of one handler call (including awaits), ms. */
  wallMs: number;
  /** QuickJS heap of one sandbox, MiB. */
  memMb: number;
}

export const DEFAULT_SCRIPT_LIMITS: ScriptLimits = { cpuMs: 5000, wallMs: 30_000, memMb: 64 };

export type Registration =
  | { kind: "route"; plan: Record<string, HostValue>; handler: number; at: string }
  | { kind: "guardedMount"; plan: Record<string, HostValue>; mountable: string; stripPrefix: boolean; at: string }
  | { kind: "mount"; prefix: string; mountable: string; stripPrefix: boolean; excludePrefixes: string[]; at: string }
  | { kind: "static"; prefix: string; directory: string; at: string }
  | { kind: "assets"; prefix: string; assets: string; root: string; excludePrefixes: string[]; spa?: { index: string }; at: string };

/** The input of one handler call. */
export interface DispatchInput {
  request: HostValue;
  actor?: HostValue;
  resources?: HostValue;
  action?: string;
  routeName: string;
  csrfToken?: string;
}

export class ScriptLoadError extends CodedError<"SCRIPT_LOAD_FAILED"> {
  constructor(message: string) {
    super("SCRIPT_LOAD_FAILED", message);
  }
}

/** Resolves `require` of the script's files relative to the requiring file, inside the bundle. */
function bundleResolver(bundle: ScriptBundle): SourceResolver {
  const has = (name: string) => Object.prototype.hasOwnProperty.call(bundle.files, name);
  const candidates = (base: string) => [base, `${base}.js`, `${base}.cjs`, `${base}.json`, `${base}/index.js`];
  return {
    resolve(specifier, importer) {
      if (specifier === "httpmod") return HTTPMOD_FILE;
      let base: string;
      if (specifier.startsWith("/")) base = specifier;
      else if (specifier.startsWith("./") || specifier.startsWith("../")) {
        const dir = (importer ?? bundle.entry).replace(/\/[^/]*$/, "");
        base = `${dir}/${specifier}`;
      } else return undefined;
      const segments: string[] = [];
      for (const s of base.split("/")) {
        if (s === "" || s === ".") continue;
        if (s === "..") {
          if (segments.length === 0) return undefined; // never above the script's directory
          segments.pop();
        } else segments.push(s);
      }
      const name = "/" + segments.join("/");
      if (name.startsWith("/.host/")) return undefined;
      return candidates(name).find(has);
    },
    source(name) {
      if (name === HTTPMOD_FILE) return HTTPMOD_SOURCE;
      const text = bundle.files[name]!;
      return name.endsWith(".json") ? `module.exports = ${text};` : text;
    },
  };
}

const asString = (v: HostValue, what: string): string => {
  if (typeof v !== "string") throw new TypeError(`${what} must be a string`);
  return v;
};

/** A mountable or assets value made by the host's modules: its token, or a TypeError. */
function token(value: HostValue, field: "$mountable" | "$assets", known: Set<string>, call: string): string {
  const t = value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Uint8Array)
    ? (value as Record<string, HostValue>)[field]
    : undefined;
  if (typeof t !== "string" || !known.has(t)) {
    throw new TypeError(`${call} accepts only ${field === "$mountable" ? "a mountable made by a host module" : "an assets module the host installed"}`);
  }
  return t;
}

/** A directory below the host's root: "" for the root itself; never absolute or escaping. */
export function staticDirectory(directory: string, call: string): string {
  if (directory === "" || directory === "." || directory === "./") return "";
  try {
    return resolveRelativePath(directory);
  } catch {
    throw new TypeError(`${call}: ${JSON.stringify(directory)} must be a relative path inside the host's static root`);
  }
}

/**
 * A directory inside an assets module: relative (`dist`) or rooted at the module's own root
 * (`/app/public`, as the original names them); "" for the module's root. A path that is not
 * inside the module (`/../x`, `%2e%2e`, NUL, a backslash or drive) is a TypeError naming it.
 */
export function assetsDirectory(root: string, moduleName: string, call: string, what: "root" | "index" = "root"): string {
  const rel = root.replace(/^\/+/, "");
  if (rel === "" || rel === "." || rel === "./") return "";
  try {
    return resolveRelativePath(rel);
  } catch {
    const kind = what === "root" ? "a directory" : "a file";
    throw new TypeError(`${call}: ${what} ${JSON.stringify(root)} is not ${kind} inside the assets module ${JSON.stringify(moduleName)}`);
  }
}

/** The module names an assets directory is installed under: its own, and for a plain name also
 * `fs:<name>` (the original's spelling, `require("fs:assets")`). */
function assetsModuleNames(name: string): string[] {
  return name.includes(":") ? [name] : [name, `fs:${name}`];
}

function prefixList(value: HostValue): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new TypeError("excludePrefixes must be a list of path prefixes");
  return value.map((p) => normalizePrefix(p, "excluded prefix"));
}

export interface ScriptSandbox {
  readonly registrations: Registration[];
  /** Calls handler `handler` with a DispatchInput as JSON (made once by the runtime, so a thread
   * gets a string rather than an object to copy). */
  dispatch(handler: number, inputJson: string): Promise<DispatchOutcome>;
  /**
   * `dispatch`, except that a compact answer (status 200, no header but a helper's content type, a
   * string body) with no console line comes back as the dispatcher's own text: a string a thread
   * can pass on as it is (no outcome object to make and copy), read with script-wire.ts's
   * `decodeOutcome` where it arrives. Anything else comes back as `dispatch` has it.
   */
  dispatchText(handler: number, inputJson: string): Promise<DispatchOutcome | string>;
  /** The sandbox cannot be used any more (replace it). */
  readonly broken: boolean;
  dispose(): void;
}

/** Makes a sandbox, installs the modules and runs the script; ScriptLoadError when it fails. */
export async function loadScriptSandbox(
  engine: SandboxEngine,
  bundle: ScriptBundle,
  natives: ScriptNatives,
  limits: ScriptLimits = DEFAULT_SCRIPT_LIMITS,
  hostCalls?: ScriptHostCalls,
): Promise<ScriptSandbox> {
  const registrations: Registration[] = [];
  const mountTokens = new Set(Object.values(natives.mountables).flatMap((m) => Object.values(m)));
  const assetTokens = new Set(Object.values(natives.assets));
  const assetNames = new Map(Object.entries(natives.assets).map(([name, t]) => [t, name]));
  let loading = true;
  let bytes: Uint8Array | undefined;
  const duringLoad = (call: string) => {
    if (!loading) throw new Error(`${call} is only possible while the script loads, not from a handler`);
  };

  // Claimed by httpmod when it loads (httpmod-source.ts); calls without its key are refused.
  const key = crypto.randomUUID();
  let claimed = false;
  const owner = (k: HostValue) => {
    if (k !== key) throw new Error(`${HOST_MODULE} answers only httpmod`);
  };
  const hostModule: NativeModule = {
    functions: {
      claim() {
        if (claimed) throw new Error(`${HOST_MODULE} was already claimed: require("httpmod") instead`);
        claimed = true;
        return key;
      },
      route(k, data) {
        owner(k);
        duringLoad("registering a route");
        const d = data as Record<string, HostValue>;
        const { handler, at, mountable, stripPrefix, ...plan } = d;
        const compiled = compileRoutePlan(plan); // throws RoutePlanError into the script, at the registering line
        if (mountable === undefined) {
          registrations.push({ kind: "route", plan: plan as Record<string, HostValue>, handler: handler as number, at: String(at) });
          return;
        }
        if (stripPrefix && !compiled.parsed.path.endsWith("/*")) {
          throw new TypeError(".mount(mountable, { stripPrefix: true }) needs a pattern that ends in /*");
        }
        registrations.push({
          kind: "guardedMount",
          plan: plan as Record<string, HostValue>,
          mountable: token(mountable, "$mountable", mountTokens, ".mount(mountable)"),
          stripPrefix: stripPrefix === true,
          at: String(at),
        });
      },
      mount(k, data) {
        owner(k);
        duringLoad("app.mount");
        const d = data as Record<string, HostValue>;
        if (d.stripPrefix !== undefined && typeof d.stripPrefix !== "boolean") throw new TypeError("stripPrefix must be true or false");
        registrations.push({
          kind: "mount",
          prefix: normalizePrefix(d.prefix),
          mountable: token(d.mountable, "$mountable", mountTokens, "app.mount(prefix, mountable)"),
          stripPrefix: d.stripPrefix === true,
          excludePrefixes: prefixList(d.excludePrefixes),
          at: String(d.at),
        });
      },
      static(k, data) {
        owner(k);
        duringLoad("app.static");
        const d = data as Record<string, HostValue>;
        if (!natives.staticFiles) throw new Error("app.static is not available on this host (it has no file tree for static files)");
        const directory = staticDirectory(asString(d.directory, "app.static(prefix, directory): directory"), "app.static(prefix, directory)");
        registrations.push({ kind: "static", prefix: normalizePrefix(d.prefix, "static prefix"), directory, at: String(d.at) });
      },
      staticAssets(k, data) {
        owner(k);
        const d = data as Record<string, HostValue>;
        const spa = d.spa as Record<string, HostValue> | undefined;
        const call = spa ? "app.spaFromAssetsModule(prefix, assetsModule, root, options)" : "app.staticFromAssetsModule(prefix, assetsModule, root)";
        duringLoad(call.slice(0, call.indexOf("(")));
        const assets = token(d.assets, "$assets", assetTokens, call);
        // The name the script required it by (`fs:assets` or `assets`), for its error messages.
        const configured = assetNames.get(assets)!;
        const required = (d.assets as Record<string, HostValue>).$name;
        const moduleName = typeof required === "string" && assetsModuleNames(configured).includes(required) ? required : configured;
        const registration: Extract<Registration, { kind: "assets" }> = {
          kind: "assets",
          prefix: normalizePrefix(d.prefix, "static prefix"),
          assets,
          root: assetsDirectory(asString(d.root, `${call}: root`), moduleName, call),
          excludePrefixes: [],
          at: String(d.at),
        };
        if (spa) {
          const index = asString(spa.index, `${call}: options.index`);
          const clean = assetsDirectory(index, moduleName, call, "index");
          if (clean === "") throw new TypeError(`${call}: options.index must name a file`);
          registration.spa = { index: clean };
          registration.excludePrefixes = prefixList(spa.excludePrefixes);
        }
        registrations.push(registration);
      },
      bytes(k, data) {
        owner(k);
        if (!(data instanceof Uint8Array)) throw new TypeError("res.send: bytes expected");
        bytes = data;
      },
    },
  };
  const modules: Record<string, NativeModule> = { [HOST_MODULE]: hostModule };
  for (const [name, fns] of Object.entries(natives.mountables)) {
    modules[name] = { functions: Object.fromEntries(Object.entries(fns).map(([fn, t]) => [fn, () => ({ $mountable: t })])) };
  }
  for (const [name, t] of Object.entries(natives.assets)) modules[name] = { values: { $assets: t, $name: name } };
  // The `fs:` spellings after every explicit name, so an explicit `fs:x` wins over x's alias.
  for (const [name, t] of Object.entries(natives.assets)) {
    for (const alias of assetsModuleNames(name)) modules[alias] ??= { values: { $assets: t, $name: alias } };
  }
  for (const [name, fns] of Object.entries(natives.services ?? {})) {
    modules[name] = {
      functions: Object.fromEntries(
        fns.map((fn) => [
          fn,
          (...args: HostValue[]) => {
            // Registrations run on every sandbox (each thread, each reload): no side effects there.
            if (loading) throw new Error(`require("${name}").${fn}() is only possible from a handler, not while the script loads`);
            if (!hostCalls) throw new Error(`require("${name}") is not connected to its host here`);
            return hostCalls(name, fn, args);
          },
        ]),
      ),
    };
  }

  const sandbox = createSandbox(engine, { limits: { ...limits, maxEvents: 1000 }, modules });
  const sources = bundleResolver(bundle);
  const consoleLines: ConsoleLine[] = [];
  const onEvent = (e: { type: string; payload: unknown }) => {
    if (e.type === "console" && consoleLines.length < 100) consoleLines.push(e.payload as ConsoleLine);
  };
  const entrySource = bundle.files[bundle.entry];
  if (entrySource === undefined) throw new ScriptLoadError(`the script ${bundle.entry} is not in its bundle`);
  // Timers the script leaves at load are cleared: a route sandbox runs code only in handlers.
  const loaded = await sandbox.evaluate(entrySource, { mode: "script", filename: bundle.entry, sources, onEvent, timers: "clear" });
  loading = false;
  if (loaded.status !== "ok") {
    sandbox.dispose();
    const why = loaded.error
      ? loaded.error.stack || `${loaded.error.name}: ${loaded.error.message}`
      : `${loaded.status}${loaded.limit ? ` (${loaded.limit})` : ""}`;
    throw new ScriptLoadError(`${bundle.entry} failed to load: ${why}`);
  }
  let broken = false;

  const callOptions = { sources, onEvent };
  const fail = (failure: "error" | "timeout" | "memory" | "broken", message: string, stack?: string): DispatchOutcome => ({
    ok: false,
    failure,
    message,
    stack,
    console: [...consoleLines],
  });

  async function run(handler: number, inputJson: string, asText: boolean): Promise<DispatchOutcome | string> {
    bytes = undefined;
    consoleLines.length = 0;
    let r;
    try {
      // The dispatcher answers a string: taken as it is (sandbox.callText), no preview made of it.
      r = await sandbox.callText(DISPATCH_GLOBAL, [handler, inputJson], callOptions);
    } catch (err) {
      if (err instanceof SandboxBrokenError) {
        broken = true;
        return fail("broken", err.message);
      }
      throw err;
    }
    if (r.status === "ok") {
      const answer = r.text;
      if (answer === undefined) return fail("error", "the handler finished without a response");
      if (answer === "") {
        // The dispatcher never answers nothing: QuickJS could not copy a huge answer out (its
        // memory limit), and says so only by an empty string.
        broken = true;
        return fail("memory", `the handler's response is too large to leave the sandbox (limit ${limits.memMb} MiB)`);
      }
      if (asText && consoleLines.length === 0 && isCompactAnswer(answer)) return answer;
      try {
        return { ok: true, response: dispatcherResponse(answer, bytes), console: [...consoleLines] };
      } catch (err) {
        // Not the dispatcher's answer: a handler's thenable hands back what its `then` returns.
        return fail("error", `the handler's answer is not a response: ${(err as Error).message}`);
      }
    }
    if (r.limit === "memory") {
      broken = true; // retained garbage may keep it near the limit: start afresh
      return fail("memory", `the handler ran out of memory (limit ${limits.memMb} MiB)`);
    }
    if (r.status === "timeout") {
      return fail(
        "timeout",
        `the handler ran past the time limit (${r.limit === "wall_ms" ? `${limits.wallMs} ms wall` : `${limits.cpuMs} ms CPU`}) and was interrupted`,
      );
    }
    if (r.status === "limit_exceeded") return fail("error", `the handler exceeded ${r.limit}`);
    return fail("error", r.error ? `${r.error.name}: ${r.error.message}` : "the handler failed", r.error?.stack);
  }

  return {
    registrations,
    get broken() {
      return broken;
    },
    dispatch: (handler, inputJson) => run(handler, inputJson, false) as Promise<DispatchOutcome>,
    dispatchText: (handler, inputJson) => run(handler, inputJson, true),
    dispose: () => sandbox.dispose(),
  };
}
