/**
 * The CSRF protector: a token bound to the host session (an HMAC of the session id under the
 * host's key), which a page embeds (`ctx.csrfToken`) and an unsafe request sends back in the
 * `X-CSRF-Token` header or a `_csrf` field of a form or JSON body. A request whose session is new
 * (no cookie came back) cannot carry a valid token. Stateless: nothing is stored per session.
 */
import { base64urlEncode } from "#lib/oauth";
import type { CsrfProtector, PipelineRequest } from "../core/services.ts";
import type { HostSession } from "../core/session.ts";

export const CSRF_HEADER = "x-csrf-token";
const CSRF_FIELD = "_csrf";

/** Compares in time that depends only on the lengths. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

/** The token a request carries: the header first, then a `_csrf` body field. */
function presentedToken(req: PipelineRequest): string | undefined {
  const header = req.script.headers[CSRF_HEADER];
  if (header) return header;
  const body = req.script.body;
  if (body !== null && typeof body === "object" && !Array.isArray(body) && !(body instanceof Uint8Array)) {
    const field = (body as Record<string, unknown>)[CSRF_FIELD];
    if (typeof field === "string") return field;
  }
  return undefined;
}

export function createCsrfProtector(options: { secret: string }): CsrfProtector {
  let key: Promise<CryptoKey> | undefined;
  const hmacKey =
    () => (key ??= crypto.subtle.importKey("raw", new TextEncoder().encode(`csrf:${options.secret}`), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]));
  const tokenFor = async (sessionId: string) =>
    base64urlEncode(new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(), new TextEncoder().encode(sessionId))));

  return {
    token: (session: HostSession) => tokenFor(session.id),
    async verify(req) {
      const session = req.script.session;
      const presented = presentedToken(req);
      if (!session || session.isNew || !presented) return false;
      return sameText(presented, await tokenFor(session.id));
    },
  };
}
