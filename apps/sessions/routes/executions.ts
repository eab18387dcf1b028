/** /executions: run code (REPL input or a worktree file), list and read executions. */
import type { Hono } from "hono";
import * as v from "valibot";
import type { ServiceContext } from "../domain/context.ts";
import * as executions from "../domain/executions.ts";
import { describe, json, noQuery, params, query } from "./api.ts";
import { ExecutionParams, ExecutionSchema, ExecutionsQuery, MAX_EXECUTIONS_LIMIT, ReplBody, ReplExecutionSchema, RunFileBody } from "./schemas.ts";

const TAG = "executions";
const RUN_ERRORS = ["SESSION_NOT_FOUND", "SESSION_NOT_READY", "SESSION_BUSY", "OUTPUT_LIMIT_EXCEEDED"] as const;
const DEFAULT_LIMIT = 50;

export function registerExecutions(routes: Hono, ctx: ServiceContext): void {
  routes.post(
    "/executions/repl",
    describe({
      tag: TAG,
      summary: "Evaluate input in the session's global scope",
      description: "201 for ok, error (a throw) and timeout (with a closing system event). A breached output or event limit is 422 " +
        "OUTPUT_LIMIT_EXCEEDED; the execution is stored as limit_exceeded with its events up to the limit (details.execution_id).",
      response: { status: 201, description: "The execution with its events", schema: ReplExecutionSchema },
      errors: [...RUN_ERRORS],
    }),
    noQuery,
    json(ReplBody),
    async (c) => {
      const { execution, events } = await executions.runExecution(ctx, { kind: "repl", ...c.req.valid("json") });
      return c.json({ ...execution, events }, 201);
    },
  );

  routes.post(
    "/executions/run-file",
    describe({
      tag: TAG,
      summary: "Run a file of the session's worktree as a script",
      description: "`path` is relative to the worktree; absolute paths, `..`, percent-encoded dots and symlinks that leave the " +
        "worktree are 422 INVALID_PATH before anything runs. The script sees `args` and `env` as globals.",
      response: { status: 201, description: "The execution", schema: ExecutionSchema },
      errors: ["INVALID_PATH", "FILE_NOT_FOUND", ...RUN_ERRORS],
    }),
    noQuery,
    json(RunFileBody),
    async (c) => {
      const body = c.req.valid("json");
      const { execution } = await executions.runExecution(ctx, { kind: "run_file", ...body, args: body.args ?? {}, env: body.env ?? {} });
      return c.json(execution, 201);
    },
  );

  routes.post(
    "/executions/:execution_id/cancel",
    describe({
      tag: TAG,
      summary: "Cancel a running execution",
      description: "Ends the execution whether its code spins, waits on a timer or waits on a host call (`http`, `fs`); its pending " +
        "timers are cleared. Answers once it has ended: status `cancelled`, its last event a `system` event saying so. The session " +
        "stays ready. 409 EXECUTION_NOT_RUNNING for an execution that has ended (also one that ended on its own first).",
      response: { status: 200, description: "The cancelled execution", schema: ExecutionSchema },
      errors: ["EXECUTION_NOT_FOUND", "EXECUTION_NOT_RUNNING"],
    }),
    params(ExecutionParams),
    noQuery,
    async (c) => c.json(await executions.cancelExecution(ctx, c.req.valid("param").execution_id)),
  );

  routes.get(
    "/executions",
    describe({
      tag: TAG,
      summary: "The session's executions, newest first",
      response: { status: 200, description: "Executions", schema: v.array(ExecutionSchema) },
      errors: ["SESSION_NOT_FOUND"],
    }),
    query(ExecutionsQuery),
    async (c) => {
      const { session_id, limit } = c.req.valid("query");
      return c.json(await executions.listExecutions(ctx, session_id, Math.min(limit ?? DEFAULT_LIMIT, MAX_EXECUTIONS_LIMIT)));
    },
  );

  routes.get(
    "/executions/:execution_id",
    describe({
      tag: TAG,
      summary: "One execution",
      response: { status: 200, description: "The execution", schema: ExecutionSchema },
      errors: ["EXECUTION_NOT_FOUND"],
    }),
    params(ExecutionParams),
    noQuery,
    async (c) => c.json(await executions.requireExecution(ctx, c.req.valid("param").execution_id)),
  );
}
