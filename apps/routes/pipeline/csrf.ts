/** Stage 3, CSRF (`.csrf()` routes): an unsafe method must carry a valid token (403). */
import { HostReply } from "../core/reply.ts";
import type { CsrfProtector } from "../core/services.ts";
import { pipeOf, type Stage, stateOf, UNSAFE } from "./state.ts";

export function csrfStage(protector: CsrfProtector): Stage {
  return async (c, next) => {
    if (UNSAFE(c.req.method) && !(await protector.verify(pipeOf(stateOf(c))))) {
      throw new HostReply(403, "CSRF_FAILED", "the CSRF token is missing or wrong", {}, "csrf");
    }
    await next();
  };
}
