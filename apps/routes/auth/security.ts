/**
 * The security services the command line and the Worker configure alike, from their settings:
 * one key for the session cookie and the CSRF tokens bound to it (set, or kept in the database,
 * or random per process); a program's bearer token or a browser's session after `/auth/login`; the policy
 * authorizer when a policy is given, else the scope authorizer.
 */
import { createBearerAuthenticator } from "./bearer.ts";
import { createBrowserSignIn, DEFAULT_CLIENT_ID, sessionOrBearer } from "./browser.ts";
import { createCsrfProtector } from "./csrf.ts";
import { type Policy, policyAuthorizer } from "./policy.ts";
import { scopeAuthorizer } from "./scope-authorizer.ts";
import type { RouteHost } from "../host/host.ts";
import type { AuthServices } from "../core/services.ts";
import { DEFAULT_SESSION_COOKIE, randomHex } from "../core/session.ts";
import { persistedSessionSecret, sqlSignedInStore } from "../store/store.ts";
import type { SqlStore } from "#lib/db";
import { CodedError } from "#lib/errors";
import { MAX_RATE_LIMIT, MAX_RATE_WINDOW_SECONDS } from "../core/plan.ts";

export interface HostSecuritySettings {
  /** Empty or unset: no authenticator (authenticated routes answer 500) and no sign-in. */
  issuer?: string;
  /** Accepted audiences of access tokens, comma or space separated; `*`: any; unset: `clientId`. */
  audience?: string;
  introspection?: { clientId: string; clientSecret: string };
  /** Browser sign-in's client (default public-spa) and its secret. */
  clientId?: string;
  clientSecret?: string;
  /** Key of the session cookie and CSRF tokens; unset: random (see `sessionSecretFor`). */
  sessionSecret?: string;
  policy?: Policy;
  /** The host's database: signed-in sessions are kept there (else in memory). */
  store?: SqlStore;
  /** The limit on the sign-in routes per client address (`parseSignInRateLimit`); unset: none. */
  signInRateLimit?: { limit: number; windowSeconds: number };
}

/** The sign-in routes' limit unless configured: 60 requests a minute from one address (a
 * sign-in takes two, a sign-out one). */
export const DEFAULT_SIGN_IN_RATE_LIMIT = "60/60";

class RateLimitSettingError extends CodedError<"INVALID_RATE_LIMIT"> {}

/** `LIMIT/SECONDS` (`60/60`: 60 requests a minute), or `off`; empty: the default. */
export function parseSignInRateLimit(value: string | undefined): { limit: number; windowSeconds: number } | undefined {
  const text = (value ?? "").trim() || DEFAULT_SIGN_IN_RATE_LIMIT;
  if (text === "off") return undefined;
  const m = /^(\d{1,10})\/(\d{1,6})s?$/.exec(text);
  const limit = Number(m?.[1]), windowSeconds = Number(m?.[2]);
  if (!m || limit < 1 || limit > MAX_RATE_LIMIT || windowSeconds < 1 || windowSeconds > MAX_RATE_WINDOW_SECONDS) {
    throw new RateLimitSettingError(
      "INVALID_RATE_LIMIT",
      `sign-in rate limit: expected LIMIT/SECONDS (such as 60/60, at most ${MAX_RATE_LIMIT}/${MAX_RATE_WINDOW_SECONDS}) or off, got "${text}"`,
    );
  }
  return { limit, windowSeconds };
}

interface HostSecurity {
  session: { secret: string };
  auth: Required<Pick<AuthServices, "authorizer" | "csrf">> & Pick<AuthServices, "authenticator">;
  /** Adds the sign-in routes (`/auth/*`) to the host, when there is an issuer. */
  register(host: RouteHost): void;
}

/** The issuer setting as a URL: a path (`/idp`) names a provider mounted on this host, at `origin`. */
export function issuerFor(setting: string, origin: string): string {
  return setting.startsWith("/") ? `${origin}${setting.replace(/\/+$/, "")}` : setting;
}

/** The session key: the configured one; else, with a database, one kept there (sessions outlive a
 * restart); else random for this process. */
export async function sessionSecretFor(configured: string | undefined, store: SqlStore | undefined): Promise<string> {
  if (configured) return configured;
  return store ? persistedSessionSecret(store, () => randomHex(32)) : randomHex(32);
}

export function hostSecurity(settings: HostSecuritySettings): HostSecurity {
  const secret = settings.sessionSecret || randomHex(32);
  const issuer = settings.issuer;
  // Tokens issued to this host's own sign-in client unless the operator lists other audiences.
  const audience = settings.audience ? settings.audience.split(/[\s,]+/).filter((a) => a !== "") : [settings.clientId || DEFAULT_CLIENT_ID];
  const bearer = issuer ? createBearerAuthenticator({ issuer, audience, introspection: settings.introspection }) : undefined;
  const sessionCookie = { secret, cookieName: DEFAULT_SESSION_COOKIE, secure: false };
  const signIn = issuer
    ? createBrowserSignIn({
      issuer,
      clientId: settings.clientId || undefined,
      clientSecret: settings.clientSecret || undefined,
      sessionCookie,
      store: settings.store ? sqlSignedInStore(settings.store) : undefined,
      rateLimit: settings.signInRateLimit,
    })
    : undefined;
  return {
    session: { secret },
    auth: {
      authenticator: bearer && signIn ? sessionOrBearer(signIn.authenticator, bearer) : undefined,
      authorizer: settings.policy ? policyAuthorizer(settings.policy) : scopeAuthorizer(),
      csrf: createCsrfProtector({ secret }),
    },
    register: (host) => signIn?.register(host),
  };
}
