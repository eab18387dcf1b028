/**
 * The sandbox's public option and result types (re-exported by sandbox.ts and index.ts), and the
 * state of one evaluation that the driver and the result shaping share.
 */
import type { QuickJSHandle } from "quickjs-emscripten-core";
import type { ConsoleLevel } from "./console.ts";
import type { EvaluationLimits, LimitName, SandboxLimits } from "./limits.ts";
import type { SourceResolver } from "./loader.ts";
import type { ErrorInfo, HostValue, ValueInfo } from "./marshal.ts";
import type { NativeFunction, NativeModuleSource } from "./modules.ts";

export interface SandboxOptions {
  limits?: Partial<SandboxLimits>;
  /** Capture console output as events (default true); false makes console methods no-ops. */
  console?: boolean;
  /** Native modules available through `require(name)` (a function makes its module on first use). */
  modules?: Record<string, NativeModuleSource>;
  /** Globals defined at creation: copied data, or host functions. */
  globals?: Record<string, HostValue | NativeFunction>;
  /** Why a bare module name is not available, for the `Cannot find module` error (undefined:
   * nothing to add): the session service says which template setting enables it. */
  missingModule?: (name: string) => string | undefined;
  /** Native modules also exposed as globals: `{ globalName: moduleName }`. */
  moduleGlobals?: Record<string, string>;
  /** Evaluate all code in strict mode. */
  strict?: boolean;
  /** The clock that limits are counted on, in milliseconds (default `performance.now`): a test's own
   * makes time limits exact and independent of the machine's load. */
  clock?: () => number;
  /** Fills its argument with random bytes for `crypto.getRandomValues`/`randomUUID` (default: the
   * host's `crypto.getRandomValues`). */
  random?: (bytes: Uint8Array) => void;
  /** false: no web platform globals (`URL`, `crypto`, ...; docs/sandbox.md), a bare ECMAScript
   * global scope. Default true. */
  webGlobals?: boolean;
}

export type SandboxEvent =
  | { type: "console"; payload: { level: ConsoleLevel; text: string } }
  | { type: "value"; payload: ValueInfo }
  | { type: "exception"; payload: ErrorInfo };

export type EvaluateMode = "repl" | "script" | "module";
export type EvaluateStatus = "ok" | "error" | "timeout" | "limit_exceeded" | "cancelled";

export interface EvaluateOptions {
  /** Shown in stack traces; default `<repl>` or `<script>`. */
  filename?: string;
  /** `repl` (default) reports the completion value as a `value` event; `script` does not;
   * `module` evaluates the code as an ES module (`import`/`export`, top-level await) and
   * reports nothing either. */
  mode?: EvaluateMode;
  /** Called synchronously as each event is produced. */
  onEvent?: (event: SandboxEvent) => void;
  /** Per-evaluation overrides of the sandbox limits. */
  limits?: Partial<EvaluationLimits>;
  /** Globals defined (copied) for this evaluation only; what was there before is put back. */
  globals?: Record<string, HostValue>;
  /** Files that `require` and `import` may load during this evaluation (see loader.ts). */
  sources?: SourceResolver;
  /**
   * What happens to timers still pending once the code's own result is known: `wait` (default for
   * `evaluate`) runs them, with the host work they start, until none is left, within `wallMs`,
   * like `node file.js`; `clear` (always for `call`) clears them. Timers left when an evaluation
   * ends any other way (a limit, a throw, cancel) are cleared too; `timersCleared` counts them.
   */
  timers?: "wait" | "clear";
  /** A flag another thread may set (`Atomics.store(flag, 0, 1)`, over a SharedArrayBuffer) to
   * cancel this evaluation even while its code spins; `Sandbox.cancel` is the same thing from the
   * sandbox's own thread. */
  cancelFlag?: Int32Array;
}

export interface EvaluateResult {
  status: EvaluateStatus;
  /** The completion value (repl mode) or the return value (`call`), when status is ok. */
  value?: ValueInfo;
  /** The thrown value, when status is error. */
  error?: ErrorInfo;
  /** Which limit ended the evaluation (`memory` comes with status error: out of memory). */
  limit?: LimitName;
  durationMs: number;
  events: number;
  outputBytes: number;
  /** Timers that were still pending when the evaluation ended and were cleared (absent: none). */
  timersCleared?: number;
}

/** What `callText` resolves with: `text` is the (awaited) return value when that is a string, which
 * then has no `value` (no preview made); any other outcome is as `call` has it. */
export interface CallTextResult extends EvaluateResult {
  text?: string;
}

/** A per-evaluation global to put back afterwards: its name and previous descriptor (owned). */
export interface SavedGlobal {
  name: string;
  previous: QuickJSHandle;
}

/** State of the evaluation in progress (internal). */
export interface Run {
  mode: EvaluateMode | "call";
  filename: string;
  sources?: SourceResolver;
  saved?: SavedGlobal[];
  onEvent: (event: SandboxEvent) => void;
  /** The promise being awaited (owned). */
  promise?: QuickJSHandle;
  /** `promise` comes from an async eval and fulfils with `{ value }`. */
  wrapped: boolean;
  /** A `callText`: a string result becomes the result's `text`. */
  asText?: boolean;
  result?: CallTextResult;
  /** Keep running pending timers once the result is known (`timers: "wait"`). */
  waitTimers: boolean;
  /** The code's own result, held while its timers still run. */
  held?: CallTextResult;
  /** onEvent threw: stop and rethrow to the caller. */
  callbackError?: { error: unknown };
}

export const MiB = 1024 * 1024;
