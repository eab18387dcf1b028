/**
 * Running code in a session, and reading executions back.
 *
 * Order of checks, so that a refused request changes nothing: the run-file path as a string
 * (INVALID_PATH), the session (SESSION_NOT_FOUND, SESSION_NOT_READY), the busy claim
 * (SESSION_BUSY, decided synchronously), the file through the worktree FileTree (INVALID_PATH for
 * a symlink out, FILE_NOT_FOUND). Only then does the code run; the ExecutionRecorder stores the
 * execution (at its end, or as `running` once it has run for `flushMs`).
 *
 * Outcomes: ok / error (a throw) / timeout / cancelled are 201; limit_exceeded is 422 OUTPUT_LIMIT_EXCEEDED
 * after the execution and its events up to the limit are stored. A runtime that dies under the
 * execution ends it as `error` with a `system` event, and the session becomes `crashed`.
 */
import { limitWording } from "../live/limits.ts";
import type { ExecutionOutcome, ExecutionRequest } from "../live/types.ts";
import * as db from "../store/executions.ts";
import type { ServiceContext } from "./context.ts";
import { executionNotFound, liveErrorCode, SessionServiceError } from "./errors.ts";
import { checkRelativePath, readFileIn } from "./files.ts";
import { type ExecutionEnd, ExecutionRecorder } from "./recorder.ts";
import { type EventRecord, type ExecutionRecord, timestamp } from "./records.ts";
import { claimSession, requireSession, sessionsCrashed } from "./sessions.ts";

type RunInput =
  | { kind: "repl"; session_id: string; input: string }
  | { kind: "run_file"; session_id: string; path: string; args: Record<string, unknown>; env: Record<string, unknown> };

interface RunResult {
  execution: ExecutionRecord;
  events: EventRecord[];
}

export async function runExecution(ctx: ServiceContext, input: RunInput): Promise<RunResult> {
  const rel = input.kind === "run_file" ? checkRelativePath(input.path, { path: input.path }) : undefined;
  const session = await requireSession(ctx, input.session_id);
  if (session.status !== "ready") {
    throw new SessionServiceError("SESSION_NOT_READY", `session ${session.id} is ${session.status}, not ready`, { status: session.status });
  }
  const release = claimSession(ctx, session.id, `session ${session.id} is running another execution`);
  try {
    let request: ExecutionRequest;
    if (input.kind === "run_file") {
      const source = await readFileIn(ctx.worktrees, session.worktree_path, rel!, { path: input.path });
      request = { kind: "run_file", path: rel!, source, args: input.args, env: input.env };
    } else {
      request = { kind: "repl", input: input.input };
    }
    const execution: ExecutionRecord = {
      id: ctx.newId(),
      session_id: session.id,
      kind: input.kind,
      ...(input.kind === "repl" ? { input: input.input } : { path: rel! }),
      args: input.kind === "run_file" ? input.args : {},
      env: input.kind === "run_file" ? input.env : {},
      status: "running",
      started_at: timestamp(ctx.clock()),
      metrics: { duration_ms: 0, events: 0, output_bytes: 0 },
    };
    const recorder = ExecutionRecorder.begin(ctx.store, ctx.clock, execution, ctx.recorderOptions);
    ctx.recorders.set(execution.id, recorder);
    try {
      const { end, failure } = await runLive(ctx, session.id, request, recorder);
      const done = await recorder.finish(end);
      if (failure) throw new SessionServiceError(failure.code, failure.message, { execution_id: done.id });
      if (done.status === "limit_exceeded") {
        throw new SessionServiceError("OUTPUT_LIMIT_EXCEEDED", done.error?.message ?? "output limit exceeded", {
          execution_id: done.id,
          limit: done.error?.limit,
        });
      }
      return { execution: done, events: [...recorder.events] };
    } finally {
      ctx.recorders.delete(execution.id);
    }
  } finally {
    release();
  }
}

function limitMessage(outcome: ExecutionOutcome): string {
  const limit = outcome.limit ? limitWording(outcome.limit) : "a limit";
  return `execution stopped: ${limit} limit exceeded`;
}

const CANCELLED = "execution cancelled";

/** What `finish` stores for an outcome the runtime reported. */
function endOf(outcome: ExecutionOutcome): ExecutionEnd {
  const base = { status: outcome.status, duration_ms: outcome.metrics.duration_ms, output_bytes: outcome.metrics.output_bytes };
  switch (outcome.status) {
    case "ok":
      return { ...base, result: outcome.result };
    case "error":
      return { ...base, error: outcome.error ?? { message: "error", stack: "" } };
    case "cancelled":
      return { ...base, error: { message: CANCELLED } };
    default:
      return { ...base, error: { message: limitMessage(outcome), ...(outcome.limit && { limit: outcome.limit }) } };
  }
}

/**
 * Runs the request on the live runtime. A timeout gets a closing `system` event (level error)
 * unless the runtime sent one. A rejection becomes an `error` end with a `system` event; for a
 * lost runtime the session is marked crashed, and rejections that mean "not now" also carry the
 * error the response should be.
 */
async function runLive(
  ctx: ServiceContext,
  sessionId: string,
  request: ExecutionRequest,
  recorder: ExecutionRecorder,
): Promise<{ end: ExecutionEnd; failure?: SessionServiceError }> {
  const started = ctx.clock();
  try {
    const outcome = await ctx.live.execute(sessionId, request, (event) => void recorder.record(event));
    const last = recorder.events.at(-1);
    if (outcome.status !== "timeout" && outcome.status !== "cancelled") return { end: endOf(outcome) };
    // The runtime sends the timeout's (or cancel's) system event unless max_events left no room;
    // the decision (such an end always has one) is kept here, and its words become the error message.
    const closing = last?.type === "system" ? last : recorder.record({
      type: "system",
      payload: outcome.status === "cancelled" ? { message: CANCELLED, level: "warn" } : { message: limitMessage(outcome), level: "error" },
    });
    const end = endOf(outcome);
    return { end: { ...end, error: { ...end.error!, message: String(closing.payload.message) } } };
  } catch (err) {
    const code = liveErrorCode(err);
    const reason = err instanceof Error ? err.message : String(err);
    let message: string;
    let failure: SessionServiceError | undefined;
    if (ctx.stopping) {
      // The runtime went away because the daemon is stopping; the session row is closed by the
      // restart recovery of the next start (it is not the session's fault: not crashed).
      message = "the daemon shut down while this execution was running";
    } else if (code === "RUNTIME_LOST") {
      message = `runtime lost: ${reason}`;
      await sessionsCrashed(ctx, [sessionId], message);
    } else if (code === "SESSION_NOT_LIVE") {
      message = `the session's runtime is not alive: ${reason}`;
      await sessionsCrashed(ctx, [sessionId], message);
      failure = new SessionServiceError("SESSION_NOT_READY", message);
    } else if (code === "SESSION_BUSY") {
      message = `the session is running another execution`;
      failure = new SessionServiceError("SESSION_BUSY", message);
    } else {
      ctx.logger.error("execution failed in the runtime", { session_id: sessionId, execution_id: recorder.id, error: reason });
      message = "internal error while running the execution";
      await ctx.live.close(sessionId);
      await sessionsCrashed(ctx, [sessionId], message);
      failure = new SessionServiceError("INTERNAL", message);
    }
    recorder.record({ type: "system", payload: { message, level: "error" } });
    return { end: { status: "error", error: { message }, duration_ms: ctx.clock() - started, output_bytes: 0 }, failure };
  }
}

/**
 * Cancels a running execution and answers with it once it has ended (`cancelled`, its last event
 * a `system` one saying so). 409 EXECUTION_NOT_RUNNING for one that has ended, also when it ended
 * on its own before the cancel reached it.
 */
export async function cancelExecution(ctx: ServiceContext, id: string): Promise<ExecutionRecord> {
  const recorder = ctx.recorders.get(id);
  if (recorder) {
    const ended = new Promise<void>((resolve) => {
      const followed = recorder.follow(recorder.events.length, { event() {}, end: () => resolve() });
      if (!followed) resolve();
    });
    await ctx.live.cancel(recorder.execution.session_id);
    await ended;
  }
  const execution = await requireExecution(ctx, id);
  if (execution.status === "cancelled" && recorder) return execution;
  throw new SessionServiceError("EXECUTION_NOT_RUNNING", `execution ${id} is not running (it ended as ${execution.status})`, {
    execution_id: id,
    status: execution.status,
  });
}

// An execution in flight is stored as it is when a reader asks for it (ExecutionRecorder.persist).

export async function requireExecution(ctx: ServiceContext, id: string): Promise<ExecutionRecord> {
  await ctx.recorders.get(id)?.persist();
  const execution = await db.getExecution(ctx.store, id);
  if (!execution) throw executionNotFound(id);
  return execution;
}

export async function listExecutions(ctx: ServiceContext, sessionId: string, limit: number): Promise<ExecutionRecord[]> {
  await requireSession(ctx, sessionId);
  for (const recorder of ctx.recorders.values()) if (recorder.execution.session_id === sessionId) await recorder.persist();
  return db.listExecutions(ctx.store, sessionId, limit);
}

export async function listEvents(ctx: ServiceContext, executionId: string, afterSeq: number): Promise<EventRecord[]> {
  await requireExecution(ctx, executionId);
  return db.listEvents(ctx.store, executionId, afterSeq);
}
