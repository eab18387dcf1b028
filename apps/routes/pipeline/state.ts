/**
 * What the stages of one planned request share: made by the first stage (request.ts), filled in
 * as the request moves through body, authenticate, CSRF, resources, authorize and the handler.
 * It travels on Hono's context as one variable, so a stage costs no map lookups beyond one.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { Logger } from "#lib/log";
import type { ServeEnv } from "#lib/runtime";
import type { RoutePlan } from "../core/plan.ts";
import type { Renderer } from "../core/response.ts";
import type { Actor, AuditEvent, AuditOutcome, AuthServices, PipelineRequest, ResourceRef } from "../core/services.ts";
import type { HostSession, sessionCookies } from "../core/session.ts";
import type { RateLimitStore } from "../store/rate-limits.ts";

/** The host's request facts the stages read (set by the host before its Hono app runs). */
export type HostEnv = ServeEnv & { requestId: string };

export interface PipelineState {
  readonly plan: RoutePlan;
  readonly requestId: string;
  readonly ip: string;
  readonly url: URL;
  readonly params: Record<string, string>;
  readonly cookies: Record<string, string>;
  readonly session: HostSession;
  /** A new session gets its cookie only if something used it (core/session.ts). */
  sessionUsed: boolean;
  /** The request as services and the handler see it (set by the body stage). */
  pipe?: PipelineRequest;
  /** The body as received (a mounted target gets it unchanged). */
  bytes?: Uint8Array;
  actor: Actor | null;
  resources: Record<string, ResourceRef | null>;
  /** Authorization passed: what fails from here is the handler's failure, not a denial. */
  allowed: boolean;
  /** Answered before the handler without an error (a sign-in redirect): the audit's denial reason. */
  deniedWith?: string;
  /** Records an audit event (the audit stage installs it; without one it does nothing). */
  audit(outcome: AuditOutcome, extra?: Partial<AuditEvent>): void;
}

export type PipelineEnv = { Bindings: HostEnv; Variables: { pipeline: PipelineState } };
export type Stage = MiddlewareHandler<PipelineEnv>;

/** What stages are built with, once per host (not per request). */
export interface StageDeps {
  auth: AuthServices;
  sessions: ReturnType<typeof sessionCookies>;
  maxBodyBytes: number;
  dev: boolean;
  log?: Logger;
  renderer?: Renderer;
  now: () => Date;
  /** Where `.rateLimit` counters live (memory, or the host's database); the host always gives one. */
  rateLimits?: RateLimitStore;
}

export const stateOf = (c: Context<PipelineEnv>): PipelineState => c.get("pipeline");

/** The parsed request: every stage after the body stage may rely on it. */
export function pipeOf(state: PipelineState): PipelineRequest {
  if (!state.pipe) throw new Error("the body stage has not run");
  return state.pipe;
}

export const UNSAFE = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS" && method !== "TRACE";
