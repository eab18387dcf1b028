/**
 * The sandbox-side helpers (prelude.ts) and the host calls into them. The bootstrap runs once,
 * before the first sandboxed code (or the first host value or global) needs it: it captures the
 * built-ins the helpers use and installs `console` and `require`. It is deferred from creation
 * because compiling it is most of what creation would cost (and its objects most of an idle
 * sandbox's heap); no sandboxed code runs before it, so the captured built-ins are still the
 * pristine ones. The formatting and loader helpers are compiled on first use, for the same reason.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import { type ConsoleSink, newConsoleEmitter } from "./console.ts";
import { SandboxMarshalError } from "./errors.ts";
import { type BootHelpers, type FormatHelpers, type HostValue, type LoaderHelpers, type Marshal, MAX_VALUE_JSON_CHARS } from "./marshal.ts";
import { hostErrorToSandbox } from "./modules.ts";
import { BOOTSTRAP_SOURCE, LOADER_SOURCE, PRELUDE_SOURCE } from "./prelude.ts";
import { HandleScope, withScope } from "./scope.ts";
import type { SavedGlobal } from "./types.ts";
import { WEB_GLOBAL_LIST } from "./web.ts";

interface BootstrapOptions {
  /** false: console methods are no-ops. */
  captureConsole: boolean;
  /** Receives console lines (counted against the limits there). */
  onConsole: ConsoleSink;
  /** Makes the sandbox's global `require` (owned by the caller). */
  newRequire(): QuickJSHandle;
  /** Makes the host function that loads the web globals' chunks (web.ts), owned by the caller. */
  newWebLoader(): QuickJSHandle;
  /** Install the web platform globals (default true). */
  webGlobals?: boolean;
  /** Runs the compile of a lazily loaded helper group with heap to spare (Outcomes.withHeadroom):
   * its first use may come when the sandbox has used up its heap. */
  withHeadroom<T>(fn: () => T): T;
}

const HELPER_EVAL = { type: "global", strict: true } as const;

export class SandboxHelpers {
  private bootHelpers: BootHelpers | undefined;
  private formatHelpers: FormatHelpers | undefined;
  private loaderHelpers: LoaderHelpers | undefined;

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly options: BootstrapOptions,
  ) {}

  /** The bootstrap has run. */
  get booted(): boolean {
    return this.bootHelpers !== undefined;
  }

  /** Runs the bootstrap on first need; throws when QuickJS cannot (out of engine heap). */
  boot(): BootHelpers {
    if (this.bootHelpers) return this.bootHelpers;
    const ctx = this.ctx;
    return withScope((scope) => {
      const emit = scope.manage(newConsoleEmitter(ctx, this.options.onConsole));
      const load = scope.manage(
        ctx.newFunction("load", (): VmCallResult<QuickJSHandle> => {
          const f = this.formatting();
          return f ? { value: f.format.dup() } : { error: ctx.newError({ name: "InternalError", message: "out of memory" }) };
        }),
      );
      const req = scope.manage(this.options.newRequire());
      const loadWeb = scope.manage(this.options.newWebLoader());
      const webGlobals = scope.manage(ctx.newString(this.options.webGlobals === false ? "" : WEB_GLOBAL_LIST));
      const factory = scope.manage(ctx.unwrapResult(ctx.evalCode(BOOTSTRAP_SOURCE, "<sandbox>", HELPER_EVAL)));
      const capture = this.options.captureConsole ? ctx.true : ctx.false;
      const list = scope.manage(ctx.unwrapResult(ctx.callFunction(factory, ctx.undefined, emit, capture, load, req, loadWeb, webGlobals)));
      const at = (i: number): QuickJSHandle => ctx.getProp(list, i);
      this.bootHelpers = { intrinsics: at(0), fromHostJson: at(1), fromHostBytes: at(2), defineGlobal: at(3) };
      return this.bootHelpers;
    });
  }

  /** The formatting helpers, compiled on first use; undefined when QuickJS could not (out of memory). */
  formatting(): FormatHelpers | undefined {
    if (this.formatHelpers) return this.formatHelpers;
    const ctx = this.ctx;
    return this.options.withHeadroom(() =>
      withScope((scope) => {
        const fn = ctx.evalCode(PRELUDE_SOURCE, "<sandbox>", HELPER_EVAL);
        if (fn.error) return void scope.manage(fn.error);
        scope.manage(fn.value);
        const maxJson = scope.manage(ctx.newNumber(MAX_VALUE_JSON_CHARS));
        const list = ctx.callFunction(fn.value, ctx.undefined, this.boot().intrinsics, maxJson);
        if (list.error) return void scope.manage(list.error);
        const h = scope.manage(list.value);
        const at = (i: number): QuickJSHandle => ctx.getProp(h, i);
        this.formatHelpers = { format: at(0), describe: at(1), describeError: at(2), toHost: at(3) };
        return this.formatHelpers;
      })
    );
  }

  /** The per-evaluation-global and CommonJS helpers, compiled on first use; throws when QuickJS cannot. */
  loader(): LoaderHelpers {
    if (this.loaderHelpers) return this.loaderHelpers;
    const ctx = this.ctx;
    return this.options.withHeadroom(() =>
      withScope((scope) => {
        const fn = scope.manage(ctx.unwrapResult(ctx.evalCode(LOADER_SOURCE, "<sandbox>", HELPER_EVAL)));
        const list = scope.manage(ctx.unwrapResult(ctx.callFunction(fn, ctx.undefined, this.boot().intrinsics)));
        const at = (i: number): QuickJSHandle => ctx.getProp(list, i);
        this.loaderHelpers = { swapGlobal: at(0), restoreGlobal: at(1), makeRequire: at(2), newModule: at(3) };
        return this.loaderHelpers;
      })
    );
  }

  /** defineProperty, not assignment: a setter the sandbox put on globalThis must not run here. */
  defineGlobal(name: string, value: QuickJSHandle, enumerable: boolean): void {
    const ctx = this.ctx;
    withScope((scope) => {
      const key = scope.manage(ctx.newString(name));
      const r = ctx.callFunction(this.boot().defineGlobal, ctx.undefined, key, value, enumerable ? ctx.true : ctx.false);
      scope.manage(r.error ?? r.value);
      if (r.error) throw new SandboxMarshalError(`cannot define the global ${JSON.stringify(name)} (it exists and is not configurable)`);
    });
  }

  /**
   * Defines per-evaluation globals, recording in `saved` what to put back; returns the sandbox
   * error (owned by the caller) when one cannot be defined.
   */
  swapGlobals(marshal: Marshal, globals: Record<string, HostValue>, saved: SavedGlobal[]): QuickJSHandle | undefined {
    const ctx = this.ctx;
    let helpers: LoaderHelpers;
    try {
      helpers = this.loader();
    } catch {
      return ctx.newError({ name: "InternalError", message: "out of memory" });
    }
    const scope = new HandleScope();
    try {
      for (const [name, value] of Object.entries(globals)) {
        let v: QuickJSHandle;
        try {
          v = scope.manage(marshal.fromHost(value));
        } catch (err) {
          return hostErrorToSandbox(ctx, new TypeError(`global ${name}: ${(err as Error).message}`));
        }
        const r = ctx.callFunction(helpers.swapGlobal, ctx.undefined, scope.manage(ctx.newString(name)), v);
        scope.dispose(); // per global: many globals need not pile up handles
        if (r.error) return r.error;
        saved.push({ name, previous: r.value });
      }
      return undefined;
    } finally {
      scope.dispose();
    }
  }

  /** Puts back what `swapGlobals` replaced (newest first); only frees the handles when the
   * engine can no longer run code (disposed, broken). */
  restoreGlobals(saved: SavedGlobal[], engineUsable: boolean): void {
    const ctx = this.ctx;
    for (const { name, previous } of saved.reverse()) {
      if (engineUsable) {
        withScope((scope) => {
          const r = ctx.callFunction(this.loaderHelpers!.restoreGlobal, ctx.undefined, scope.manage(ctx.newString(name)), previous);
          scope.manage(r.error ?? r.value);
        });
      }
      previous.dispose();
    }
    saved.length = 0;
  }

  dispose(): void {
    for (const group of [this.bootHelpers, this.formatHelpers, this.loaderHelpers]) {
      if (group) { for (const h of Object.values(group) as QuickJSHandle[]) if (h.alive) h.dispose(); }
    }
    this.bootHelpers = this.formatHelpers = this.loaderHelpers = undefined;
  }
}
