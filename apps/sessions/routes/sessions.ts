/** /sessions: create, list, detail, close (POST .../close and DELETE are the same). */
import type { Hono } from "hono";
import * as v from "valibot";
import type { ServiceContext } from "../domain/context.ts";
import * as sessions from "../domain/sessions.ts";
import { describe, json, noQuery, type OperationDoc, params, query } from "./api.ts";
import { CreateSessionBody, SessionParams, SessionSchema, SessionsQuery } from "./schemas.ts";

const TAG = "sessions";

export function registerSessions(routes: Hono, ctx: ServiceContext): void {
  routes.post(
    "/sessions",
    describe({
      tag: TAG,
      summary: "Create a session from a template",
      description: "The runtime is allocated, libraries are loaded and startup files run in ascending order_index. " +
        "A failure after the row exists leaves it `crashed` with `last_error`; the error names it in `details.session_id`.",
      response: { status: 201, description: "The session, ready", schema: SessionSchema },
      errors: ["TEMPLATE_NOT_FOUND", "INVALID_PATH", "FILE_NOT_FOUND", "STARTUP_FAILED"],
    }),
    noQuery,
    json(CreateSessionBody),
    async (c) => c.json(await sessions.createSession(ctx, c.req.valid("json")), 201),
  );

  routes.get(
    "/sessions",
    describe({
      tag: TAG,
      summary: "List sessions, oldest first, optionally by status",
      response: { status: 200, description: "Sessions", schema: v.array(SessionSchema) },
      errors: [],
    }),
    query(SessionsQuery),
    async (c) => c.json(await sessions.listSessions(ctx, c.req.valid("query").status)),
  );

  routes.get(
    "/sessions/:session_id",
    describe({
      tag: TAG,
      summary: "A session, with closed_at and last_error when relevant",
      response: { status: 200, description: "The session", schema: SessionSchema },
      errors: ["SESSION_NOT_FOUND"],
    }),
    params(SessionParams),
    noQuery,
    async (c) => c.json(await sessions.requireSession(ctx, c.req.valid("param").session_id)),
  );

  routes.post(
    "/sessions/:session_id/restart",
    describe({
      tag: TAG,
      summary: "Restart a session's runtime",
      description: "A fresh global scope: libraries are loaded and startup files run again (read again now). The session keeps its id, " +
        "executions and worktree. 409 SESSION_BUSY while an execution runs (cancel it first). A startup that fails leaves the " +
        "session `crashed` with `last_error`.",
      response: { status: 200, description: "The session, ready", schema: SessionSchema },
      errors: ["SESSION_NOT_FOUND", "SESSION_NOT_READY", "SESSION_BUSY", "INVALID_PATH", "FILE_NOT_FOUND", "STARTUP_FAILED"],
    }),
    params(SessionParams),
    noQuery,
    async (c) => c.json(await sessions.restartSession(ctx, c.req.valid("param").session_id)),
  );

  const closeDoc = (summary: string): OperationDoc => ({
    tag: TAG,
    summary,
    description: "Idempotent: a closed session is returned as it is; a crashed one stays crashed (it has no runtime).",
    response: { status: 200, description: "The session after closing", schema: SessionSchema },
    errors: ["SESSION_NOT_FOUND"],
  });
  routes.post(
    "/sessions/:session_id/close",
    describe(closeDoc("Close a session")),
    params(SessionParams),
    noQuery,
    async (c) => c.json(await sessions.closeSession(ctx, c.req.valid("param").session_id)),
  );
  routes.delete(
    "/sessions/:session_id",
    describe(closeDoc("Close a session (alias of POST .../close)")),
    params(SessionParams),
    noQuery,
    async (c) => c.json(await sessions.closeSession(ctx, c.req.valid("param").session_id)),
  );
}
