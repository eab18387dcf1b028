/**
 * Typed errors thrown to the HOST by the sandbox library. Each has a stable `code` to match on;
 * messages may change. Errors thrown by sandboxed code are never host exceptions: they come back
 * as an `error` outcome of `evaluate`.
 */
import { CodedError } from "#lib/errors";
export type SandboxErrorCode =
  | "SANDBOX_DISPOSED"
  | "SANDBOX_BUSY"
  | "SANDBOX_BROKEN"
  | "SANDBOX_INVALID_OPTIONS"
  | "SANDBOX_MARSHAL"
  | "SANDBOX_ENGINE_LOAD";

export class SandboxError extends CodedError<SandboxErrorCode> {}

/** Any call on a sandbox after `dispose()`. */
export class SandboxDisposedError extends SandboxError {
  constructor() {
    super("SANDBOX_DISPOSED", "the sandbox has been disposed");
  }
}

/** A second evaluation started while one is still running (sandboxes run one thing at a time). */
export class SandboxBusyError extends SandboxError {
  constructor() {
    super("SANDBOX_BUSY", "the sandbox is already running an evaluation");
  }
}

/**
 * The engine state can no longer be trusted (the host stack overflowed inside QuickJS, or the
 * engine aborted). The sandbox refuses further work; dispose it and create a new one.
 */
export class SandboxBrokenError extends SandboxError {
  constructor(reason: string) {
    super("SANDBOX_BROKEN", `the sandbox is broken and must be discarded: ${reason}`);
  }
}

export class SandboxOptionsError extends SandboxError {
  constructor(message: string) {
    super("SANDBOX_INVALID_OPTIONS", message);
  }
}

/** A host value that cannot cross into the sandbox (function, class instance, cycle, ...). */
export class SandboxMarshalError extends SandboxError {
  constructor(message: string) {
    super("SANDBOX_MARSHAL", message);
  }
}

export class SandboxEngineLoadError extends SandboxError {
  constructor(message: string, cause: unknown) {
    super("SANDBOX_ENGINE_LOAD", message, { cause });
  }
}
