/**
 * The DEBUG build of QuickJS, for leak tests: its runtime asserts that every object was freed,
 * and `assertNoMemoryAllocated()` checks that every runtime and context was disposed. Kept out of
 * `index.ts` so production bundles (workerd) never pull in the debug WebAssembly.
 */
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule, TestQuickJSWASMModule } from "quickjs-emscripten-core";
import DEBUG_SYNC from "@jitl/quickjs-wasmfile-debug-sync";

let debugModule: Promise<QuickJSWASMModule> | undefined;

/** A fresh leak-tracking wrapper around the (memoized) debug-sync engine. */
export async function loadDebugQuickJS(): Promise<TestQuickJSWASMModule> {
  debugModule ??= newQuickJSWASMModuleFromVariant(DEBUG_SYNC);
  return new TestQuickJSWASMModule(await debugModule);
}

/**
 * Throws if any runtime made by `engine` is still alive or if the leak sanitizer finds memory
 * that was never freed. (`assertNoMemoryAllocated` of quickjs-emscripten 0.32 also counts
 * runtimes made with `newRuntime` as leaked even after they were disposed, so it is not used.)
 */
export function assertNoLeaks(engine: TestQuickJSWASMModule): void {
  const alive = [...engine.runtimes].filter((rt) => rt.alive).length;
  if (alive > 0) throw new Error(`${alive} QuickJS runtime(s) not disposed`);
  if (engine.getFFI().QTS_RecoverableLeakCheck()) throw new Error("leak sanitizer: memory was allocated and never freed");
}
