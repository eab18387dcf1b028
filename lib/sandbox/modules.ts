/**
 * Host-provided native modules, reachable in the sandbox only through `require(name)`.
 * A module is data plus host functions; arguments and results are copied (see marshal.ts).
 * A host function may return a Promise: the sandbox then gets a promise that settles when the
 * host one does (the evaluation keeps waiting for it, within its wall-time limit).
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import type { HostValue, Marshal } from "./marshal.ts";

/** A host function callable from the sandbox. Throwing gives a sandbox exception carrying only
 * the error's name, message and string `code` (never the host stack). */
export type NativeFunction = (...args: HostValue[]) => HostValue | void | Promise<HostValue | void>;

export interface NativeModule {
  functions?: Record<string, NativeFunction>;
  values?: Record<string, HostValue>;
}

/** What the native-function bridge needs from its sandbox. */
export interface HostCallSite {
  readonly ctx: QuickJSContext;
  readonly marshal: Marshal;
  /** Turns a pending host promise into a sandbox promise handle (owned by the caller). */
  adoptHostPromise(p: Promise<HostValue | void>): QuickJSHandle;
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
      out = fn(...args);
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

/**
 * `require(name)` for the sandbox. Module objects are built on first use and cached (frozen), so
 * sandbox creation does not pay for modules that are never required.
 */
export class ModuleRegistry {
  private readonly cache = new Map<string, QuickJSHandle>();

  constructor(
    private readonly site: HostCallSite,
    private readonly modules: Readonly<Record<string, NativeModule>>,
  ) {}

  /** The `require` function value (owned by the caller). */
  newRequire(): QuickJSHandle {
    const { ctx } = this.site;
    return ctx.newFunction("require", (nameHandle?: QuickJSHandle): VmCallResult<QuickJSHandle> => {
      const name = nameHandle && ctx.typeof(nameHandle) === "string" ? ctx.getString(nameHandle) : undefined;
      if (name === undefined) return { error: ctx.newError({ name: "TypeError", message: "require: the module name must be a string" }) };
      const cached = this.cache.get(name);
      if (cached) return { value: cached.dup() };
      if (!Object.hasOwn(this.modules, name)) {
        const err = ctx.newError({ name: "Error", message: `Cannot find module '${name}'` });
        const code = ctx.newString("MODULE_NOT_FOUND");
        ctx.setProp(err, "code", code);
        code.dispose();
        return { error: err };
      }
      try {
        const handle = this.build(name, this.modules[name]!);
        this.cache.set(name, handle);
        return { value: handle.dup() };
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
