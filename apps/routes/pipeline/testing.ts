/**
 * Shared by the pipeline stage tests (not a test file): the fixtures most of them use and
 * `stageApp`, a tiny Hono app that runs a list of stages with the host's error answer.
 */
import { Hono } from "hono";
import type { Logger } from "#lib/log";
import { compileRoutePlan } from "../core/plan.ts";
import { replyResponse } from "../core/reply.ts";
import type { Actor, AuditEvent, AuditSink, ResourceRef } from "../core/services.ts";
import { sessionCookies } from "../core/session.ts";
import type { HostEnv, PipelineEnv, Stage } from "./state.ts";

export const sessions = sessionCookies({ secret: "pipeline-test-secret", cookieName: "routes_session", secure: false });
export const alice: Actor = { id: "alice", kind: "user", tenantIds: ["t1"] };
/** Alice's document in her tenant. */
export const doc: ResourceRef = { id: "d1", tenantId: "t1" };

/** The route most stage tests serve, and its public plan. */
export const DOCS = "/t/:tenant/docs/:id";
export const publicDocs = compileRoutePlan({ method: "ALL", pattern: DOCS, public: true });

/** An audit sink that keeps what it is given. */
export function collecting(): AuditSink & { events: AuditEvent[] } {
  const events: AuditEvent[] = [];
  return { events, record: (e) => void events.push(e) };
}

/** The `error` of an error answer's JSON body. */
export const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

interface StageAppOptions {
  /** The method the stages are registered on (ALL unless given). */
  method?: string;
  /** Dev mode for the error answer (messages of 500s shown). */
  dev?: boolean;
  /** Where the error answer logs a 500 (as the host's log). */
  log?: Logger;
  /** What every request's environment holds besides `requestId: "r1"`. */
  env?: Partial<HostEnv>;
}

/** Fetches `path` (below http://host.test) from the app; `env` adds to the app's environment. */
type StageFetch = (path: string, init?: RequestInit, env?: Partial<HostEnv>) => Promise<Response>;

/**
 * `stages` on `pattern` (every method unless `options.method`), errors answered with `replyResponse` as host/host.ts does
 * (dev mode, log, request id and the route's name).
 */
export function stageApp(pattern: string, stages: Stage[], options: StageAppOptions = {}): StageFetch {
  const hono = new Hono<PipelineEnv>();
  hono.onError((err, c) =>
    replyResponse(err, { dev: options.dev ?? false, log: options.log, requestId: c.env.requestId, route: c.get("pipeline")?.plan.name })
  );
  const on = hono.on.bind(hono) as unknown as (method: string, path: string, ...handlers: Stage[]) => unknown;
  on(options.method ?? "ALL", pattern, ...stages);
  return (path, init = {}, env = {}) => Promise.resolve(hono.fetch(new Request(`http://host.test${path}`, init), { requestId: "r1", ...options.env, ...env }));
}
