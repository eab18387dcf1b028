/**
 * The host session (spec: `request.session`): an identifier kept in a cookie signed with Hono's
 * signed-cookie helpers, so a client can return its id but not choose one. An identifier, not a
 * credential (docs/routes.md, "Host session").
 *
 * Two things keep it off the hot path, where WebCrypto's HMAC (a key import and a thread-pool hop
 * per call) cost more than the rest of a request: a verified cookie value is remembered, so a
 * returning client's cookie is checked once; and a new session gets its cookie only when
 * something used it (the handler read `request.session`, or a CSRF token was made for it), as
 * express-session does with `saveUninitialized: false`.
 */
import { parseSigned, serializeSigned } from "hono/utils/cookie";

/** The host session as a request carries it (`request.session`, the CSRF protector's key). */
export interface HostSession {
  id: string;
  isNew: boolean;
  cookieName: string;
}

export interface SessionCookieOptions {
  secret: string;
  cookieName: string;
  secure: boolean;
}

const REMEMBERED = 10_000;
export const DEFAULT_SESSION_COOKIE = "routes_session";

/** `bytes` random bytes as hex: session keys, mountable tokens. */
export const randomHex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

export function sessionCookies(options: SessionCookieOptions) {
  const { secret, cookieName } = options;
  /** Signed cookie values already verified -> their session id. */
  const verified = new Map<string, string>();

  return {
    cookieName,
    /** The session a request carries, or a new one (its cookie not issued yet). */
    async read(cookies: Record<string, string>, cookieHeader: string | null): Promise<HostSession> {
      const value = cookies[cookieName];
      if (value !== undefined && cookieHeader) {
        let id = verified.get(value);
        if (id === undefined) {
          const signed = await parseSigned(cookieHeader, secret, cookieName);
          const checked = signed[cookieName];
          if (typeof checked === "string" && checked !== "") {
            if (verified.size >= REMEMBERED) verified.clear();
            verified.set(value, checked);
            id = checked;
          }
        }
        if (id !== undefined) return { id, isNew: false, cookieName };
      }
      return { id: crypto.randomUUID(), isNew: true, cookieName };
    },
    /** The Set-Cookie value that hands a new session to the client; `Secure` when configured so or
     * when the request came over https (`https`: its URL, which a trusted proxy may have made https). */
    issue(session: HostSession, https = false): Promise<string> {
      return serializeSigned(cookieName, session.id, secret, { path: "/", httpOnly: true, sameSite: "Lax", secure: options.secure || https });
    },
  };
}
