/** /executions: run code (REPL input or a worktree file), list and read executions. */
import type { ServiceContext } from "../domain/context.ts";
import * as executions from "../domain/executions.ts";
import type { ApiRouter } from "./api.ts";
import { ExecutionsQuery, MAX_EXECUTIONS_LIMIT, ReplBody, RunFileBody } from "./schemas.ts";

const TAG = "executions";
const RUN_ERRORS = ["SESSION_NOT_FOUND", "SESSION_NOT_READY", "SESSION_BUSY", "OUTPUT_LIMIT_EXCEEDED"] as const;
const DEFAULT_LIMIT = 50;

export function registerExecutions(router: ApiRouter, ctx: ServiceContext): void {
  router.add(
    {
      method: "post",
      path: "/executions/repl",
      tag: TAG,
      summary: "Evaluate input in the session's global scope",
      description:
        "201 for ok, error (a throw) and timeout (with a closing system event). A breached output or event limit is 422 " +
        "OUTPUT_LIMIT_EXCEEDED; the execution is stored as limit_exceeded with its events up to the limit (details.execution_id).",
      body: ReplBody,
      response: { status: 201, description: "The execution with its events", schema: "ReplExecution" },
      errors: [...RUN_ERRORS],
    },
    async (c, { body }) => {
      const { execution, events } = await executions.runExecution(ctx, { kind: "repl", ...body });
      return c.json({ ...execution, events }, 201);
    },
  );

  router.add(
    {
      method: "post",
      path: "/executions/run-file",
      tag: TAG,
      summary: "Run a file of the session's worktree as a script",
      description:
        "`path` is relative to the worktree; absolute paths, `..`, percent-encoded dots and symlinks that leave the " +
        "worktree are 422 INVALID_PATH before anything runs. The script sees `args` and `env` as globals.",
      body: RunFileBody,
      response: { status: 201, description: "The execution", schema: "Execution" },
      errors: ["INVALID_PATH", "FILE_NOT_FOUND", ...RUN_ERRORS],
    },
    async (c, { body }) => {
      const { execution } = await executions.runExecution(ctx, { kind: "run_file", ...body, args: body.args ?? {}, env: body.env ?? {} });
      return c.json(execution, 201);
    },
  );

  router.add(
    {
      method: "get",
      path: "/executions",
      tag: TAG,
      summary: "The session's executions, newest first",
      query: ExecutionsQuery,
      response: { status: 200, description: "Executions", schema: ["Execution"] },
      errors: ["SESSION_NOT_FOUND"],
    },
    async (c, { query }) => c.json(await executions.listExecutions(ctx, query.session_id, Math.min(query.limit ?? DEFAULT_LIMIT, MAX_EXECUTIONS_LIMIT))),
  );

  router.add(
    {
      method: "get",
      path: "/executions/{execution_id}",
      tag: TAG,
      summary: "One execution",
      params: { execution_id: "uuid" },
      response: { status: 200, description: "The execution", schema: "Execution" },
      errors: ["EXECUTION_NOT_FOUND"],
    },
    async (c, { params }) => c.json(await executions.requireExecution(ctx, params.execution_id)),
  );
}
