/**
 * Who is signed in: the actor (and ID token) of each signed-in host session, by session id.
 * Only a completed sign-in writes here, never an anonymous request (the pre-login state lives in
 * a signed cookie, auth/browser.ts), so anonymous traffic cannot push a signed-in user out.
 *
 * Two places: memory (bounded; a restart signs everyone out) and the host's SQL store
 * (`sqlSignedInStore` in store.ts: survives a restart, shared by every instance on the database).
 */
import type { Actor } from "../core/services.ts";

export interface SignedInSession {
  actor: Actor;
  idToken?: string;
  /** Epoch ms. */
  expires: number;
}

export interface SignedInStore {
  get(sessionId: string): Promise<SignedInSession | undefined>;
  put(sessionId: string, session: SignedInSession): Promise<void>;
  delete(sessionId: string): Promise<void>;
}

/** In memory: expired entries go first; only when `max` live sessions are signed in does the one
 * signed in longest ago make room (a sign-in, never an anonymous request, causes that). */
export function memorySignedInStore(options: { max?: number; now?: () => number } = {}): SignedInStore {
  const max = options.max ?? 50_000;
  const now = options.now ?? Date.now;
  const sessions = new Map<string, SignedInSession>();
  return {
    async get(id) {
      const s = sessions.get(id);
      if (s && s.expires <= now()) {
        sessions.delete(id);
        return undefined;
      }
      return s;
    },
    async put(id, session) {
      sessions.delete(id);
      if (sessions.size >= max) { for (const [k, s] of sessions) if (s.expires <= now()) sessions.delete(k); }
      if (sessions.size >= max) sessions.delete(sessions.keys().next().value!);
      sessions.set(id, session);
    },
    async delete(id) {
      sessions.delete(id);
    },
  };
}
