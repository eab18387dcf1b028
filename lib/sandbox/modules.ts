/**
 * Host-provided native modules, reachable in the sandbox only through `require(name)`.
 * A module is data plus host functions; arguments and results are copied (see marshal.ts).
 * A host function may return a Promise: the sandbox then gets a promise that settles when the
 * host one does (the evaluation keeps waiting for it, within its wall-time limit).
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import type { HostValue, Marshal } from "./marshal.ts";

/** What a host function is called with as `this`. */
export interface NativeCall {
  /** Aborted once the evaluation that made the call no longer waits for its result (it ended,
   * was cancelled or stopped by a limit, or the sandbox was disposed): host work still going
   * (a fetch) should stop, since nothing will receive it. */
  readonly signal: AbortSignal;
}

/** A host function callable from the sandbox. Throwing gives a sandbox exception carrying only
 * the error's name, message and string `code` (never the host stack). */
export type NativeFunction = (this: NativeCall, ...args: HostValue[]) => HostValue | void | Promise<HostValue | void>;

export interface NativeModule {
  functions?: Record<string, NativeFunction>;
  values?: Record<string, HostValue>;
}

/** A module, or a function that makes it on first use (idle sandboxes then pay nothing for it). */
export type NativeModuleSource = NativeModule | (() => NativeModule);

/** What the native-function bridge needs from its sandbox. */
export interface HostCallSite {
  readonly ctx: QuickJSContext;
  readonly marshal: Marshal;
  /** Turns a pending host promise into a sandbox promise handle (owned by the caller). */
  adoptHostPromise(p: Promise<HostValue | void>): QuickJSHandle;
  /** The `this` of a host function called now (see NativeCall). */
  nativeCall(): NativeCall;
}

const STANDARD_ERRORS = new Set(["Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "URIError", "EvalError"]);

/** A host error as a fresh sandbox Error: name (standard ones only), message, string `code`. */
export function hostErrorToSandbox(ctx: QuickJSContext, err: unknown): QuickJSHandle {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
  const name = e && typeof e.name === "string" && STANDARD_ERRORS.has(e.name) ? e.name : "Error";
  const message = e && typeof e === "object" && "message" in e ? String(e.message) : String(err);
  const handle = ctx.newError({ name, message });
  if (e && typeof e.code === "string") {
    const code = ctx.newString(e.code);
    ctx.setProp(handle, "code", code);
    code.dispose();
  }
  return handle;
}

/** Wraps a host function as a sandbox function value. */
export function newNativeFunction(site: HostCallSite, name: string, fn: NativeFunction): QuickJSHandle {
  const { ctx } = site;
  return ctx.newFunction(name, (...argHandles: QuickJSHandle[]): VmCallResult<QuickJSHandle> => {
    const args: HostValue[] = new Array(argHandles.length);
    for (let i = 0; i < argHandles.length; i++) {
      const r = site.marshal.toHost(argHandles[i]!);
      if ("error" in r) return { error: r.error };
      args[i] = r.value;
    }
    let out: HostValue | void | Promise<HostValue | void>;
    try {
      out = fn.apply(site.nativeCall(), args);
    } catch (err) {
      return { error: hostErrorToSandbox(ctx, err) };
    }
    if (out instanceof Promise) return { value: site.adoptHostPromise(out) };
    try {
      return { value: site.marshal.fromHost(out as HostValue) };
    } catch (err) {
      return { error: hostErrorToSandbox(ctx, new TypeError(`${name} returned a value the sandbox cannot receive: ${(err as Error).message}`)) };
    }
  });
}

/** `Error: Cannot find module 'name'` with `code: "MODULE_NOT_FOUND"`, as Node words it. */
function moduleNotFound(ctx: QuickJSContext, name: string, why = ""): QuickJSHandle {
  const err = ctx.newError({ name: "Error", message: `Cannot find module '${name}'${why ? `: ${why}` : ""}` });
  const code = ctx.newString("MODULE_NOT_FOUND");
  ctx.setProp(err, "code", code);
  code.dispose();
  return err;
}

/** Loads what `require` names when it is not a native module (source files, see loader.ts);
 * `importer` is the requiring file, when the call came from a file's own `require`. */
type RequireFallback = (name: string, importer: string | undefined) => VmCallResult<QuickJSHandle>;

/**
 * `require(name)` for the sandbox. Module objects are built on first use and cached (frozen), so
 * sandbox creation does not pay for modules that are never required.
 */
export class ModuleRegistry {
  private readonly cache = new Map<string, QuickJSHandle>();
  private readonly made = new Map<string, NativeModule>();

  constructor(
    private readonly site: HostCallSite,
    private readonly modules: Readonly<Record<string, NativeModuleSource>>,
    private readonly missingModule?: (name: string) => string | undefined,
  ) {}

  /** `Cannot find module 'name'`, with why a bare name is not available when the host says. */
  notFound(name: string): QuickJSHandle {
    const bare = !name.startsWith(".") && !name.startsWith("/");
    return moduleNotFound(this.site.ctx, name, bare ? (this.missingModule?.(name) ?? "") : "");
  }

  has(name: string): boolean {
    return Object.hasOwn(this.modules, name);
  }

  private module(name: string): NativeModule {
    let mod = this.made.get(name);
    if (!mod) {
      const source = this.modules[name]!;
      mod = typeof source === "function" ? source() : source;
      this.made.set(name, mod);
    }
    return mod;
  }

  /** Export names of a native module (for `import` of it). */
  keys(name: string): string[] {
    if (!this.has(name)) return [];
    const mod = this.module(name);
    return [...Object.keys(mod.values ?? {}), ...Object.keys(mod.functions ?? {})];
  }

  /** The (cached, frozen) module object; the caller owns the returned handle. */
  get(name: string): QuickJSHandle {
    const cached = this.cache.get(name);
    if (cached) return cached.dup();
    const handle = this.build(name, this.module(name));
    this.cache.set(name, handle);
    return handle.dup();
  }

  /** The `require(name, importer?)` function value (owned by the caller). */
  newRequire(fallback?: RequireFallback): QuickJSHandle {
    const { ctx } = this.site;
    return ctx.newFunction("require", (nameHandle?: QuickJSHandle, importerHandle?: QuickJSHandle): VmCallResult<QuickJSHandle> => {
      const name = nameHandle && ctx.typeof(nameHandle) === "string" ? ctx.getString(nameHandle) : undefined;
      if (name === undefined) return { error: ctx.newError({ name: "TypeError", message: "require: the module name must be a string" }) };
      if (!this.has(name)) {
        const importer = importerHandle && ctx.typeof(importerHandle) === "string" ? ctx.getString(importerHandle) : undefined;
        return fallback ? fallback(name, importer) : { error: this.notFound(name) };
      }
      try {
        return { value: this.get(name) };
      } catch (err) {
        return { error: hostErrorToSandbox(ctx, err) };
      }
    });
  }

  private build(name: string, mod: NativeModule): QuickJSHandle {
    const { ctx, marshal } = this.site;
    const obj = ctx.newObject();
    try {
      for (const [key, value] of Object.entries(mod.values ?? {})) {
        const h = marshal.fromHost(value);
        ctx.setProp(obj, key, h);
        h.dispose();
      }
      for (const [key, fn] of Object.entries(mod.functions ?? {})) {
        const h = newNativeFunction(this.site, `${name}.${key}`, fn);
        ctx.setProp(obj, key, h);
        h.dispose();
      }
      // Frozen: one sandbox's code cannot swap a module function for the next require caller.
      const freeze = ctx.getProp(ctx.global, "Object").consume((o) => ctx.getProp(o, "freeze"));
      ctx.callFunction(freeze, ctx.undefined, obj).dispose();
      freeze.dispose();
      return obj;
    } catch (err) {
      obj.dispose();
      throw err;
    }
  }

  dispose(): void {
    for (const h of this.cache.values()) if (h.alive) h.dispose();
    this.cache.clear();
  }
}
