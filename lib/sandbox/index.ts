/**
 * QuickJS sandbox library: load an engine once, create sandboxes on it, evaluate code with
 * limits enforced while it runs. See docs/sandbox.md. The debug engine for leak tests is in
 * `./debug.ts` (not re-exported, so production bundles do not include it).
 */
export { loadQuickJS, type LoadQuickJSOptions, type SandboxEngine } from "./engine.ts";
export {
  type CallTextResult,
  createSandbox,
  type EvaluateMode,
  type EvaluateOptions,
  type EvaluateResult,
  type EvaluateStatus,
  Sandbox,
  type SandboxEvent,
  type SandboxOptions,
} from "./sandbox.ts";
export { DEFAULT_LIMITS, type EvaluationLimits, type LimitName, type SandboxLimits } from "./limits.ts";
export type { ErrorInfo, HostValue, JsonValue, ValueInfo } from "./marshal.ts";
export type { NativeCall, NativeFunction, NativeModule, NativeModuleSource } from "./modules.ts";
export type { SourceResolver } from "./loader.ts";
export type { ConsoleLevel } from "./console.ts";
export {
  SandboxBrokenError,
  SandboxBusyError,
  SandboxDisposedError,
  SandboxEngineLoadError,
  SandboxError,
  type SandboxErrorCode,
  SandboxMarshalError,
  SandboxOptionsError,
} from "./errors.ts";
