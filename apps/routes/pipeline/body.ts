/**
 * Stage 1, the body: read within the host's limit and parsed by its content type (bad JSON is 400
 * before anything else looks at the request; past the limit 413, and the connection closes rather
 * than read the rest). Makes the request as services and the handler see it.
 */
import { readBody, RequestBodyError, scriptRequest } from "../core/request.ts";
import { HostReply } from "../core/reply.ts";
import { type Stage, type StageDeps, stateOf } from "./state.ts";

export function bodyStage(deps: Pick<StageDeps, "maxBodyBytes">): Stage {
  return async (c, next) => {
    const state = stateOf(c);
    const request = c.req.raw;
    let body;
    try {
      body = await readBody(request, deps.maxBodyBytes, c.env.body);
    } catch (err) {
      if (err instanceof RequestBodyError) {
        throw new HostReply(err.status, err.code, err.message, err.status === 413 ? { connection: "close" } : {}, err.code.toLowerCase());
      }
      throw err;
    }
    state.bytes = body.bytes;
    const script = scriptRequest(request, state.url, {
      params: state.params,
      session: state.session,
      ip: state.ip,
      cookies: state.cookies,
      rawHeaders: c.env.rawHeaders,
      ...body,
    });
    state.pipe = { request, script, route: state.plan, requestId: state.requestId };
    await next();
  };
}
