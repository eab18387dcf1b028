/** /sessions: create, list, detail, close (POST .../close and DELETE are the same). */
import type { Context } from "hono";
import type { ServiceContext } from "../domain/context.ts";
import * as sessions from "../domain/sessions.ts";
import type { ApiRouter } from "./api.ts";
import { CreateSessionBody, SessionsQuery } from "./schemas.ts";

const TAG = "sessions";
const ID = { session_id: "uuid" } as const;

export function registerSessions(router: ApiRouter, ctx: ServiceContext): void {
  router.add(
    {
      method: "post",
      path: "/sessions",
      tag: TAG,
      summary: "Create a session from a template",
      description:
        "The runtime is allocated, libraries are loaded and startup files run in ascending order_index. " +
        "A failure after the row exists leaves it `crashed` with `last_error`; the error names it in `details.session_id`.",
      body: CreateSessionBody,
      response: { status: 201, description: "The session, ready", schema: "Session" },
      errors: ["TEMPLATE_NOT_FOUND", "INVALID_PATH", "FILE_NOT_FOUND", "STARTUP_FAILED"],
    },
    async (c, { body }) => c.json(await sessions.createSession(ctx, body), 201),
  );

  router.add(
    {
      method: "get",
      path: "/sessions",
      tag: TAG,
      summary: "List sessions, oldest first, optionally by status",
      query: SessionsQuery,
      response: { status: 200, description: "Sessions", schema: ["Session"] },
      errors: [],
    },
    async (c, { query }) => c.json(await sessions.listSessions(ctx, query.status)),
  );

  router.add(
    {
      method: "get",
      path: "/sessions/{session_id}",
      tag: TAG,
      summary: "A session, with closed_at and last_error when relevant",
      params: ID,
      response: { status: 200, description: "The session", schema: "Session" },
      errors: ["SESSION_NOT_FOUND"],
    },
    async (c, { params }) => c.json(await sessions.requireSession(ctx, params.session_id)),
  );

  const close = async (c: Context, { params }: { params: { session_id: string } }) => c.json(await sessions.closeSession(ctx, params.session_id));
  const closeDoc = {
    tag: TAG,
    params: ID,
    description: "Idempotent: a closed session is returned as it is; a crashed one stays crashed (it has no runtime).",
    response: { status: 200, description: "The session after closing", schema: "Session" },
    errors: ["SESSION_NOT_FOUND"],
  } as const;
  router.add({ ...closeDoc, errors: [...closeDoc.errors], method: "post", path: "/sessions/{session_id}/close", summary: "Close a session" }, close);
  router.add({ ...closeDoc, errors: [...closeDoc.errors], method: "delete", path: "/sessions/{session_id}", summary: "Close a session (alias of POST .../close)" }, close);
}
