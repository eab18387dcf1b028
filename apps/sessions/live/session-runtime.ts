/**
 * One session's sandbox, runtime-free: built from the SessionSpec (limits, console, strict,
 * modules and capabilities, libraries, startup files), it runs REPL inputs and worktree files
 * and turns the sandbox's results into the service's events and outcomes.
 *
 * Event budget: `max_events` counts every event of an execution, `input_echo` and the timeout's
 * `system` event included. The sandbox gets `max_events - 1` (the echo comes first); the
 * `system` event of a timeout is emitted only while the count is below `max_events`.
 *
 * Run-file: the file is evaluated in the session's global scope as the REPL evaluates an input, so
 * its completion value is the execution's `result` and a `value` event (an ES module with
 * `runtime.esm`, which has no completion value), with the globals `args` (the request's object) and `env` (host variables that
 * `env` capabilities allow, overlaid by the request's `env`) defined for that run only; what was
 * there before is put back afterwards.
 */
import { resolveRelativePath } from "#lib/files";
import {
  createSandbox,
  type EvaluateResult,
  type HostValue,
  type Sandbox,
  SandboxBrokenError,
  SandboxDisposedError,
  type SandboxEngine,
  SandboxError,
  type SandboxEvent,
  type SourceResolver,
} from "#lib/sandbox";
import { type ImportResolver, importResolver, prefetchImports } from "./imports.ts";
import { reportedLimit, sandboxLimits, stoppedWording } from "./limits.ts";
import { sessionCatalog } from "./modules/catalog.ts";
import { type ExecutionOutcome, type ExecutionRequest, type LiveEvent, LiveRuntimeError, type LiveRuntimeOptions, type SessionSpec } from "./types.ts";

/** A sandbox result in words, for startup failures and the timeout's system event. */
function describeFailure(r: EvaluateResult, spec: SessionSpec): string {
  switch (r.status) {
    case "error":
      return r.error ? r.error.stack.split("\n")[0] || `${r.error.name}: ${r.error.message}` : "error";
    case "timeout":
    case "limit_exceeded":
      return stoppedWording(r.status, r.limit, spec.settings.limits);
    default:
      return "ok";
  }
}

function toLiveEvent(e: SandboxEvent): LiveEvent {
  if (e.type === "exception") return { type: "exception", payload: { message: e.payload.message, stack: e.payload.stack } };
  return { type: e.type, payload: { ...e.payload } };
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** ", 2 pending timers cleared" (empty for none): said in the closing event of an execution. */
function timersCleared(r: EvaluateResult): string {
  const n = r.timersCleared ?? 0;
  return n === 0 ? "" : `; ${n} pending timer${n === 1 ? "" : "s"} cleared`;
}

export class SessionRuntime {
  private running = false;
  /** Cancel was asked for the execution now running (it may not have reached the sandbox yet). */
  private cancelRequested = false;
  private closed = false;
  private readonly natives: ReadonlySet<string>;

  private constructor(
    private readonly sandbox: Sandbox,
    private spec: SessionSpec,
    private readonly options: LiveRuntimeOptions,
    private readonly resolver: ImportResolver,
    private readonly env: Record<string, string>,
    natives: string[],
  ) {
    this.natives = new Set(natives);
  }

  /**
   * Creates the sandbox, loads the libraries into the global scope, runs the startup files in
   * the given order. Any failure is LiveRuntimeError STARTUP_FAILED naming what failed; nothing
   * is left alive.
   */
  static async open(engine: SandboxEngine, spec: SessionSpec, options: LiveRuntimeOptions): Promise<SessionRuntime> {
    const catalog = sessionCatalog(spec, options);
    const { limits, runtime } = spec.settings;
    let sandbox: Sandbox;
    try {
      sandbox = createSandbox(engine, {
        limits: sandboxLimits(limits),
        console: runtime.console,
        strict: runtime.strict,
        modules: catalog.modules,
        missingModule: catalog.missingModule,
        moduleGlobals: catalog.moduleGlobals,
      });
    } catch (err) {
      throw new LiveRuntimeError("STARTUP_FAILED", `the sandbox could not be created: ${(err as Error).message}`);
    }
    const session = new SessionRuntime(sandbox, spec, options, importResolver(spec.settings.resolver), catalog.env, Object.keys(catalog.modules));
    try {
      await session.startup();
      // The sources of libraries and startup files are not needed any more.
      session.spec = { ...spec, libraries: [], startupFiles: [] };
      return session;
    } catch (err) {
      sandbox.dispose();
      if (err instanceof LiveRuntimeError) throw err;
      throw new LiveRuntimeError("STARTUP_FAILED", `startup failed: ${(err as Error).message ?? String(err)}`);
    }
  }

  private async startup(): Promise<void> {
    const spec = this.spec;
    for (const lib of spec.libraries) {
      const r = await this.sandbox.loadLibrary(lib.name, lib.source);
      if (r.status !== "ok") throw new LiveRuntimeError("STARTUP_FAILED", `library "${lib.name}" failed: ${describeFailure(r, spec)}`);
    }
    for (const file of spec.startupFiles) {
      const name = "/" + resolveRelativePath(file.path);
      const sources = await this.prefetch(name, file.source);
      const r = await this.sandbox.evaluate(file.source, { mode: spec.settings.runtime.esm ? "module" : "script", filename: name, sources });
      if (r.status !== "ok") throw new LiveRuntimeError("STARTUP_FAILED", `startup file "${file.path}" failed: ${describeFailure(r, spec)}`);
    }
  }

  private prefetch(name: string | undefined, source: string): Promise<SourceResolver | undefined> {
    return prefetchImports(this.options.worktrees, this.spec.worktreePath, this.resolver, { name, source }, this.natives);
  }

  /** An execution runs. Refusing a second one is the caller's (LiveRuntimes.execute): two at once
   * would share one sandbox. */
  get busy(): boolean {
    return this.running;
  }

  get live(): boolean {
    return !this.closed;
  }

  /**
   * Runs one execution (never two at once: see `busy`); `onEvent` gets every event in order as it
   * is produced. Throws LiveRuntimeError SESSION_NOT_LIVE after close, RUNTIME_LOST when the
   * sandbox broke (it is then closed) or was closed under the execution.
   */
  async execute(request: ExecutionRequest, onEvent: (event: LiveEvent) => void, cancelFlag?: Int32Array): Promise<ExecutionOutcome> {
    if (this.closed) throw new LiveRuntimeError("SESSION_NOT_LIVE", `session ${this.spec.sessionId} is not live`);
    this.running = true;
    this.cancelRequested = false;
    try {
      return await this.run(request, onEvent, cancelFlag);
    } catch (err) {
      if (err instanceof SandboxBrokenError) {
        this.close();
        throw new LiveRuntimeError("RUNTIME_LOST", `the session's sandbox broke and was discarded: ${err.message}`);
      }
      if (err instanceof SandboxDisposedError) throw new LiveRuntimeError("RUNTIME_LOST", "the session was closed while the execution ran");
      if (err instanceof SandboxError) throw new LiveRuntimeError("RUNTIME_LOST", err.message);
      throw err;
    } finally {
      this.running = false;
    }
  }

  /** Cancels the running execution (see LiveRuntimes.cancel); false when none runs. */
  cancel(): boolean {
    if (!this.running || this.closed) return false;
    this.cancelRequested = true;
    this.sandbox.cancel();
    return true;
  }

  private async run(request: ExecutionRequest, onEvent: (event: LiveEvent) => void, cancelFlag: Int32Array | undefined): Promise<ExecutionOutcome> {
    const started = performance.now();
    const { limits, runtime } = this.spec.settings;
    let events = 0;
    const emit = (e: LiveEvent) => {
      events++;
      onEvent(e);
    };
    const metrics = (outputBytes: number) => ({ duration_ms: round(performance.now() - started), events, output_bytes: outputBytes });
    if (limits.max_events < 1) return { status: "limit_exceeded", limit: "max_events", metrics: metrics(0) };

    const isRepl = request.kind === "repl";
    const name = isRepl ? undefined : "/" + resolveRelativePath(request.path);
    const code = isRepl ? request.input : request.source;
    emit({ type: "input_echo", payload: isRepl ? { text: request.input } : { path: request.path } });
    const sources = await this.prefetch(name, code);
    if (this.cancelRequested || (cancelFlag && Atomics.load(cancelFlag, 0) !== 0)) {
      emit({ type: "system", payload: { message: "execution cancelled", level: "warn" } });
      return { status: "cancelled", metrics: metrics(0) };
    }
    const r = await this.sandbox.evaluate(code, {
      // A plain file is evaluated like a REPL input (its completion value reported); a module has none.
      mode: !isRepl && runtime.esm ? "module" : "repl",
      filename: name,
      sources,
      globals: isRepl ? undefined : { args: request.args as HostValue, env: { ...this.env, ...(request.env as Record<string, HostValue>) } },
      limits: { maxEvents: limits.max_events - 1, wallMs: Math.max(0, limits.wall_ms - (performance.now() - started)) },
      onEvent: (e) => emit(toLiveEvent(e)),
      cancelFlag,
    });

    const outcome: ExecutionOutcome = { status: r.status, metrics: metrics(r.outputBytes) };
    if (r.value) outcome.result = { ...r.value };
    if (r.error) outcome.error = { message: r.error.message, stack: r.error.stack };
    if (r.limit) outcome.limit = reportedLimit(r.limit);
    // The closing event says why it ended early, and what happened to timers still pending.
    if (events < limits.max_events) {
      if (r.status === "timeout") {
        emit({ type: "system", payload: { message: `execution ${describeFailure(r, this.spec)}${timersCleared(r)}`, level: "error" } });
      } else if (r.status === "cancelled") {
        emit({ type: "system", payload: { message: `execution cancelled${timersCleared(r)}`, level: "warn" } });
      } else if (r.timersCleared) {
        emit({ type: "system", payload: { message: timersCleared(r).slice(2), level: "warn" } });
      }
    }
    outcome.metrics = metrics(r.outputBytes);
    return outcome;
  }

  /** Frees the sandbox. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sandbox.dispose();
  }
}
