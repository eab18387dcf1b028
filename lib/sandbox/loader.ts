/**
 * Source files in the sandbox: `require(specifier)` (CommonJS) and `import` (ES modules) of files
 * the host serves synchronously through a per-evaluation `SourceResolver`. QuickJS runs
 * synchronously, so the host must have the files in hand before the evaluation starts (the
 * session service reads the candidates from the worktree first).
 *
 * Caching: a file is evaluated once per sandbox for a given text, like Node's module cache; when
 * its text changes, the next load evaluates the new text. ES modules cannot be unloaded from
 * QuickJS, so each version stays in the context until the sandbox is disposed; a changed version
 * gets the name `file?v=N`.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import type { LoaderHelpers } from "./marshal.ts";
import { hostErrorToSandbox, type ModuleRegistry } from "./modules.ts";
import { MAX_NESTING, nestingDepth } from "./source.ts";

/**
 * Files the sandboxed code may load. Names are canonical and start with "/" (bare names are
 * native modules); `importer` is the canonical name of the importing file, or undefined for code
 * that is not a file (a REPL input).
 */
export interface SourceResolver {
  /** The file `specifier` names, or undefined when there is none. May throw an Error: its
   * message reaches the sandbox. */
  resolve(specifier: string, importer: string | undefined): string | undefined;
  /** The text of a name `resolve` returned. */
  source(name: string): string;
}

/** What the loader needs to know about the evaluation in progress. */
interface LoadContext {
  sources?: SourceResolver;
  /** The evaluated code's filename: the importer of the global `require`. */
  filename: string;
}

const EVAL_TYPE_GLOBAL = 0;
const EVAL_FLAG_STRICT = 8;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED = new Set(
  "break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await"
    .split(
      " ",
    ),
);
const VERSION = /\?v=\d+$/;
/** Prefix of a normalized name that failed to resolve (file names start with "/"). */
const MISSING = "!missing:";

export class SourceLoader {
  private readonly cjs = new Map<string, { source: string; module: QuickJSHandle }>();
  /** ES module texts seen per file, in version order. */
  private readonly esm = new Map<string, string[]>();

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly helpers: () => LoaderHelpers,
    private readonly natives: ModuleRegistry,
    private readonly strict: boolean,
    private readonly current: () => LoadContext | undefined,
  ) {}

  private error(name: string, message: string): { error: QuickJSHandle } {
    return { error: this.ctx.newError({ name, message }) };
  }

  /** Resolves through the evaluation's sources; `{error}` for anything that is not there. */
  private resolve(specifier: string, importer: string | undefined): { name: string; source: string } | { error: QuickJSHandle } {
    const run = this.current();
    if (!run?.sources) return { error: this.natives.notFound(specifier) };
    try {
      const name = run.sources.resolve(specifier, importer);
      if (name === undefined) return { error: this.natives.notFound(specifier) };
      const source = run.sources.source(name);
      if (nestingDepth(source) > MAX_NESTING) return this.error("SyntaxError", `${name}: nesting too deep (more than ${MAX_NESTING} levels)`);
      return { name, source };
    } catch (err) {
      return { error: hostErrorToSandbox(this.ctx, err) };
    }
  }

  /** `require` of a non-native name: evaluates the file as CommonJS (once per text). */
  require(specifier: string, importer: string | undefined): VmCallResult<QuickJSHandle> {
    const ctx = this.ctx;
    const from = importer ?? fileOf(this.current()?.filename);
    const found = this.resolve(specifier, from);
    if ("error" in found) return found;
    const { name, source } = found;
    const cached = this.cjs.get(name);
    if (cached?.source === source) return { value: ctx.getProp(cached.module, "exports") };
    if (cached) {
      this.cjs.delete(name);
      cached.module.dispose();
    }
    // The wrapper keeps the file's line numbers (only line 1's columns shift), like Node's.
    const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
    const fn = ctx.evalCode(wrapped, name, EVAL_TYPE_GLOBAL | (this.strict ? EVAL_FLAG_STRICT : 0));
    if (fn.error) return { error: fn.error };
    let helpers: LoaderHelpers;
    try {
      helpers = this.helpers();
    } catch {
      fn.value.dispose();
      return this.error("InternalError", "out of memory");
    }
    const file = ctx.newString(name);
    const dir = ctx.newString(name.slice(0, name.lastIndexOf("/")) || "/");
    const handles = [fn.value, file, dir];
    try {
      const module = this.call(helpers.newModule, file);
      if ("error" in module) return module;
      const req = this.call(helpers.makeRequire, file);
      if ("error" in req) {
        module.value.dispose();
        return req;
      }
      const exports = ctx.getProp(module.value, "exports");
      handles.push(req.value, exports);
      // Cached before it runs, so a require cycle gets the partial exports (Node's rule).
      this.cjs.set(name, { source, module: module.value });
      const r = ctx.callFunction(fn.value, exports, exports, req.value, module.value, file, dir);
      if (r.error) {
        this.cjs.delete(name);
        module.value.dispose();
        return { error: r.error };
      }
      r.value.dispose();
      return { value: ctx.getProp(module.value, "exports") };
    } finally {
      for (const h of handles) h.dispose();
    }
  }

  private call(fn: QuickJSHandle, arg: QuickJSHandle): VmCallResult<QuickJSHandle> {
    return this.ctx.callFunction(fn, this.ctx.undefined, arg);
  }

  /** The QuickJS name of an ES module file with this text (`file` or `file?v=N`). */
  moduleName(name: string, source: string): string {
    let versions = this.esm.get(name);
    if (!versions) this.esm.set(name, versions = []);
    let i = versions.indexOf(source);
    if (i < 0) i = versions.push(source) - 1;
    return i === 0 ? name : `${name}?v=${i + 1}`;
  }

  /**
   * QuickJS module normalizer: `import x from "spec"` inside `base`. A failure is passed on to
   * the loader as a `MISSING` name carrying the message (an error thrown by a normalizer is
   * lost: QuickJS goes on to load the empty name).
   */
  normalize(base: string, specifier: string): string {
    if (this.natives.has(specifier)) return specifier;
    const found = this.resolve(specifier, fileOf(base.replace(VERSION, "")));
    if ("error" in found) return MISSING + errorMessage(this.ctx, found.error);
    return this.moduleName(found.name, found.source);
  }

  /** QuickJS module loader: the text of a normalized name. */
  load(moduleName: string): string | { error: Error } {
    if (moduleName.startsWith(MISSING)) return { error: new Error(moduleName.slice(MISSING.length)) };
    if (this.natives.has(moduleName)) return nativeModuleSource(moduleName, this.natives.keys(moduleName));
    const m = /^(.*)\?v=(\d+)$/.exec(moduleName);
    const name = m ? m[1]! : moduleName;
    const source = this.esm.get(name)?.[m ? Number(m[2]) - 1 : 0];
    return source ?? { error: new Error(`Cannot find module '${moduleName}'`) };
  }

  dispose(): void {
    for (const { module } of this.cjs.values()) if (module.alive) module.dispose();
    this.cjs.clear();
    this.esm.clear();
  }
}

/** A filename that names a source file (canonical names start with "/"), else undefined. */
function fileOf(filename: string | undefined): string | undefined {
  return filename?.startsWith("/") ? filename : undefined;
}

function errorMessage(ctx: QuickJSContext, h: QuickJSHandle): string {
  try {
    const m = ctx.getProp(h, "message");
    const text = ctx.typeof(m) === "string" ? ctx.getString(m) : "module not found";
    m.dispose();
    return text;
  } finally {
    h.dispose();
  }
}

/** `import x, { f } from "fs"`: a module re-exporting the native module through `require`. */
function nativeModuleSource(name: string, keys: string[]): string {
  const named = keys.filter((k) => IDENTIFIER.test(k) && !RESERVED.has(k));
  const lines = [`const m = require(${JSON.stringify(name)});`, "export default m;"];
  if (named.length > 0) lines.push(`export const ${named.map((k) => `${k} = m.${k}`).join(", ")};`);
  return lines.join("\n");
}
