/**
 * Loading the QuickJS WebAssembly module (the "engine"). The caller loads it once and passes it to
 * `createSandbox`; many sandboxes share one engine (each sandbox is its own QuickJS runtime).
 *
 * On workerd WebAssembly cannot be compiled from bytes, so the worker imports the variant's
 * `.wasm` file as a module (CompiledWasm rule) and passes it as `wasmModule`.
 */
import type { CustomizeVariantOptions, QuickJSRuntime, QuickJSWASMModule, RuntimeOptions } from "quickjs-emscripten-core";
import { SandboxEngineLoadError } from "./errors.ts";

/** The packages load with the engine, not with this module: a process that only passes work to
 * sandbox threads never pays for them (the route host's and session service's start). */
const packages = () => Promise.all([import("quickjs-emscripten-core"), import("@jitl/quickjs-wasmfile-release-sync")]);

/** What a sandbox needs from an engine: a way to make runtimes. `QuickJSWASMModule` and the
 * leak-checking `TestQuickJSWASMModule` both fit. */
export interface SandboxEngine {
  newRuntime(options?: RuntimeOptions): QuickJSRuntime;
  /** The engine's WebAssembly memory, used to watch heap growth (see limits.ts). */
  getWasmMemory?(): WebAssembly.Memory;
}

export interface LoadQuickJSOptions {
  /** A precompiled module of `@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm`
   * (required on workerd). */
  wasmModule?: WebAssembly.Module;
  /**
   * Cap of the engine's WebAssembly heap, MiB (all sandboxes of the engine share it; default
   * Emscripten's 2048). QuickJS's per-runtime memory limit is weak under Emscripten (see
   * limits.ts), so this is the hard bound on what sandboxed code can make the host allocate:
   * an allocation past it fails with an out-of-memory error in the sandbox that made it.
   */
  maxHeapMb?: number;
}

// Memo of loaded engines, per (wasmModule, maxHeapMb). Loading takes ~10-30 ms, so callers that
// forget to keep the engine do not pay it twice.
const DEFAULT_KEY = {};
const memo = new WeakMap<object, Map<number, Promise<QuickJSWASMModule>>>();
const WASM_PAGE = 64 * 1024;
/** Emscripten's initial heap for this build (16 MiB); a given memory must be at least that. */
const INITIAL_HEAP_BYTES = 16 * 1024 * 1024;

/** Loads (once per options) the release-sync QuickJS engine. */
export function loadQuickJS(options: LoadQuickJSOptions = {}): Promise<QuickJSWASMModule> {
  const { wasmModule, maxHeapMb } = options;
  const key: object = wasmModule ?? DEFAULT_KEY;
  let byHeap = memo.get(key);
  if (!byHeap) memo.set(key, byHeap = new Map());
  const heapKey = maxHeapMb ?? 0;
  let p = byHeap.get(heapKey);
  if (!p) {
    p = load(async () => {
      const [{ newQuickJSWASMModuleFromVariant, newVariant }, { default: RELEASE_SYNC }] = await packages();
      if (!wasmModule && maxHeapMb === undefined) return newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
      const custom: CustomizeVariantOptions = {};
      if (wasmModule) custom.wasmModule = wasmModule;
      if (maxHeapMb !== undefined) {
        const maximum = Math.max(INITIAL_HEAP_BYTES, Math.floor(maxHeapMb * 1024 * 1024)) / WASM_PAGE;
        custom.wasmMemory = new WebAssembly.Memory({ initial: INITIAL_HEAP_BYTES / WASM_PAGE, maximum: Math.floor(maximum) });
      }
      return newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, custom));
    });
    byHeap.set(heapKey, p);
  }
  return p;
}
async function load(fn: () => Promise<QuickJSWASMModule>): Promise<QuickJSWASMModule> {
  try {
    return await fn();
  } catch (err) {
    throw new SandboxEngineLoadError(`could not load the QuickJS engine: ${String(err)}`, err);
  }
}
