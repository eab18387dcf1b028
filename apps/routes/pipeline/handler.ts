/**
 * The last stage: authorization has passed (audited `allowed`), and the route's target answers.
 * A script handler crosses into a sandbox with the request as data; a host handler gets the
 * planned context; a guarded mount gets the request as it came (its body re-attached).
 * Authenticated routes (the pages that post forms) get the CSRF token; public ones do not, so they
 * cost no HMAC and set no session cookie.
 */
import type { FetchHandler } from "#lib/runtime";
import type { HostValue } from "#lib/sandbox";
import { rawBelow, type RoutePlan } from "../core/plan.ts";
import { errorResponse, HostReply } from "../core/reply.ts";
import { ResponseRuleError, toWebResponse } from "../core/response.ts";
import type { HostHandler } from "../core/types.ts";
import type { ScriptRuntime } from "../script/runtime.ts";
import { type PipelineState, pipeOf, type Stage, type StageDeps, stateOf } from "./state.ts";

export type Target =
  | { kind: "script"; handler: number; at: string }
  | { kind: "host"; handler: HostHandler }
  /** A planned route whose target is a host mountable (`.mount(...)` on the Ready stage). */
  | { kind: "mount"; handler: FetchHandler; prefix: string; strip: boolean; at: string };

interface Answer {
  response: Response;
  /** The handler read the host session (its cookie must go out if it is new). */
  sessionUsed: boolean;
}

export function handlerStage(plan: RoutePlan, target: Target, deps: StageDeps & { runtime?: ScriptRuntime }): Stage {
  const run = target.kind === "script" ? scriptTarget(target, deps) : target.kind === "host" ? hostTarget(target) : mountTarget(target);
  return async (c) => {
    const state = stateOf(c);
    state.allowed = true;
    state.audit("allowed");
    let csrfToken: string | undefined;
    if (deps.auth.csrf?.token && !plan.public) {
      csrfToken = await deps.auth.csrf.token(state.session);
      state.sessionUsed = true;
    }
    const answer = await run(state, csrfToken);
    state.sessionUsed ||= answer.sessionUsed;
    return answer.response;
  };
}

type Run = (state: PipelineState, csrfToken: string | undefined) => Promise<Answer>;

function hostTarget(target: Extract<Target, { kind: "host" }>): Run {
  return async (state, csrfToken) => {
    const { script, request: raw } = pipeOf(state);
    let sessionUsed = false;
    const session = script.session;
    const request = Object.defineProperty({ ...script }, "session", { get: () => ((sessionUsed = true), session), enumerable: true });
    const resources = state.resources;
    const response = await target.handler({
      request,
      raw,
      actor: state.actor,
      body: script.body,
      params: script.params,
      resources,
      resource: (name) => resources[name] ?? null,
      action: state.plan.action,
      routeName: state.plan.name,
      csrfToken,
    });
    return { response, sessionUsed };
  };
}

function mountTarget(target: Extract<Target, { kind: "mount" }>): Run {
  return async (state) => {
    const { request, script } = pipeOf(state);
    const url = new URL(request.url);
    if (target.strip && target.prefix !== "/") url.pathname = rawBelow(url.pathname, target.prefix) || "/";
    const hasBody = state.bytes !== undefined && state.bytes.byteLength > 0;
    const forwarded = new Request(url, {
      method: request.method,
      headers: request.headers,
      body: hasBody ? (state.bytes as Uint8Array<ArrayBuffer>) : undefined,
    });
    return {
      response: await target.handler(forwarded, {
        requestId: state.requestId,
        clientAddress: script.ip || undefined,
        mountPrefix: target.prefix,
        mountStripped: target.strip,
      }),
      sessionUsed: false,
    };
  };
}

function scriptTarget(target: Extract<Target, { kind: "script" }>, deps: StageDeps & { runtime?: ScriptRuntime }): Run {
  const { log, dev } = deps;
  const failed = (message: string): Answer => ({ response: errorResponse(500, "HANDLER_FAILED", dev ? message : "internal error"), sessionUsed: false });
  return async (state, csrfToken) => {
    if (!deps.runtime) throw new HostReply(500, "NO_RUNTIME", "no script runtime is configured");
    const { request, script } = pipeOf(state);
    const route = state.plan.name;
    const outcome = await deps.runtime.dispatch(target.handler, {
      request: script as unknown as HostValue,
      actor: state.actor as unknown as HostValue,
      resources: state.resources as unknown as HostValue,
      action: state.plan.action,
      routeName: route,
      csrfToken,
    });
    for (const line of outcome.console) log?.info("script console", { request_id: state.requestId, route, level: line.level, text: line.text });
    if (!outcome.ok) {
      log?.error("handler failed", {
        request_id: state.requestId,
        route,
        failure: outcome.failure,
        error: outcome.message,
        stack: outcome.stack,
        at: target.at,
      });
      return failed(outcome.message);
    }
    try {
      return { response: await toWebResponse(outcome.response, request.method, deps.renderer), sessionUsed: outcome.response.sessionUsed === true };
    } catch (err) {
      if (!(err instanceof ResponseRuleError)) throw err;
      log?.error("handler response refused", { request_id: state.requestId, route, error: err.message, at: target.at });
      return failed(err.message);
    }
  };
}
