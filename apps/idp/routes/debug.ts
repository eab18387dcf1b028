/**
 * The loopback-only debug interface: counts, listings (secrets as 8-character prefixes), the key
 * endpoint mode, key rotation, a clock offset for tests, run-time scenarios and reset; and
 * `/debug/ui`, a page that shows and drives all of it.
 *
 * With a debug token (`--debug-token`, IDP_DEBUG_TOKEN) a loopback caller must present it as well
 * (Bearer, or the cookie `/debug/ui?token=<token>` sets: lib/http/access-token.ts): a reverse
 * proxy or a tunnel on this machine makes every caller look local.
 */
import type { Context, Hono } from "hono";
import { challenge, clientAddress, FRAME_DENY, isLoopbackAddress, JsonDepthError, MAX_JSON_DEPTH, parseJsonBounded, requireAccessToken } from "#lib/http";
import { endAllSessions, endSubjectSessions, notifyExpiredSessions } from "../domain/backchannel.ts";
import { UsersDocumentError } from "../domain/errors.ts";
import { PATH_ISSUER_NAME, type Provider } from "../domain/provider.ts";
import { secretPrefix } from "../domain/random.ts";
import { type AccessTokenRecord, type CodeRecord, type DeviceGrantRecord, JWKS_MODES, type JwksMode, type SessionRecord } from "../domain/records.ts";
import { parseSeededUser, type SeededUser } from "../domain/users.ts";
import { debugPage } from "../pages/debug.ts";
import { registerDebugClient } from "./debug-client.ts";
import { registerDebugRequests } from "./debug-requests.ts";
import { RESETTABLE_KINDS, type StateKind } from "../state/store.ts";
import { NO_STORE, readBodyText, rfc3339 } from "./http.ts";
import { sameOriginOnly } from "./same-origin.ts";

const badRequest = (c: Context, description?: string) =>
  c.json(description === undefined ? { error: "invalid_request" } : { error: "invalid_request", error_description: description }, 400);

/** The body as JSON; text nested deeper than MAX_JSON_DEPTH (64) is refused unparsed (`deep`),
 * so a scenario's claims can never be too deep to sign into a token later. */
async function jsonBody(c: Context): Promise<{ ok: true; value: unknown } | { ok: false; deep?: true }> {
  try {
    return { ok: true, value: parseJsonBounded(await readBodyText(c)) };
  } catch (err) {
    return err instanceof JsonDepthError ? { ok: false, deep: true } : { ok: false };
  }
}

const unexpired = async <T extends { expires_at: number }>(p: Provider, kind: StateKind, now: number) =>
  (await p.state.entries<T>(kind)).filter(([, r]) => r.expires_at > now);

/** The live records of a kind, expired ones pruned first. */
const live = async <T extends { expires_at: number }>(p: Provider, kind: StateKind) => {
  const now = p.now();
  await p.state.prune(now);
  return unexpired<T>(p, kind, now);
};

/** One prune (a write, on a database) for all six counts. */
async function counts(p: Provider) {
  const now = p.now();
  await p.state.prune(now);
  const count = async (kind: StateKind) => (await unexpired(p, kind, now)).length;
  return {
    sessions: await count("session"),
    codes: await count("code"),
    tokens: await count("access_token"),
    refresh_tokens: await count("refresh_token"),
    device_grants: await count("device_grant"),
    replay_entries: await count("replay"),
  };
}

/** A scenario as POST /debug/scenarios reports it (the password itself is never echoed). */
function describeScenario(user: SeededUser): Record<string, unknown> {
  const { password, ...rest } = user;
  return { ...rest, password_set: password !== undefined };
}

/** The cookie the debug interface's link sets (its own name: a browser sends a host's cookies to
 * every port, the session service's included). */
const DEBUG_COOKIE = "idp_debug_token";

const unauthorized = (c: Context, presented: boolean) =>
  c.json(
    {
      error: "unauthorized",
      error_description: presented
        ? "the debug token is wrong"
        : "the debug interface needs its token: Authorization: Bearer <token>, or open the link the provider printed when it started",
    },
    401,
    { "WWW-Authenticate": challenge("idp-debug", presented), "Cache-Control": "no-store" },
  );

export function registerDebug(app: Hono, p: Provider): void {
  const guard = async (c: Context, next: () => Promise<void>) => {
    if (!isLoopbackAddress(clientAddress(c))) return c.json({ error: "forbidden" }, 403);
    c.header("Cache-Control", "no-store");
    // Its pages (the UI, the debug client) are never framed: a frame's clicks would drive it.
    for (const [name, value] of Object.entries(FRAME_DENY)) c.header(name, value);
    await next();
  };
  // A page of another site must not reset, rotate or re-clock the provider through the browser.
  const sameOrigin = sameOriginOnly((c) => c.json({ error: "forbidden", error_description: "a request from another origin" }, 403));
  const token = p.options.debugToken;
  const withToken = token === undefined ? [] : [requireAccessToken({ token, cookie: DEBUG_COOKIE, deny: unauthorized })];
  app.use("/debug", guard, ...withToken, sameOrigin);
  app.use("/debug/*", guard, ...withToken, sameOrigin);
  registerDebugClient(app, p);
  registerDebugRequests(app, p);

  app.get("/debug", async (c) => c.json({ counts: await counts(p), jwks_mode: p.jwksMode() }));

  app.get("/debug/sessions", async (c) =>
    c.json(
      (await live<SessionRecord>(p, "session")).map(([id, s]) => ({
        id_prefix: secretPrefix(id),
        login: s.login,
        sub: s.sub,
        auth_time: rfc3339(s.auth_time),
        expires_at: rfc3339(s.expires_at),
      })),
    ));

  app.get("/debug/codes", async (c) =>
    c.json(
      (await live<CodeRecord>(p, "code")).map(([code, r]) => ({
        code_prefix: secretPrefix(code),
        client_id: r.client_id,
        sub: r.sub,
        expires_at: rfc3339(r.expires_at),
      })),
    ));

  app.get("/debug/tokens", async (c) =>
    c.json(
      (await live<AccessTokenRecord>(p, "access_token")).map(([token, r]) => {
        const row: Record<string, unknown> = {
          token_prefix: secretPrefix(token),
          client_id: r.client_id,
          sub: r.sub,
          scope: r.scope,
          token_type: r.jkt ? "DPoP" : "Bearer",
          expires_at: rfc3339(r.expires_at),
        };
        if (r.jkt) row.jkt = r.jkt;
        return row;
      }),
    ));

  app.get("/debug/device-grants", async (c) =>
    c.json(
      (await live<DeviceGrantRecord>(p, "device_grant")).map(([code, g]) => ({
        device_code_prefix: secretPrefix(code),
        user_code: g.user_code,
        client_id: g.client_id,
        status: g.status,
        expires_at: rfc3339(g.expires_at),
      })),
    ));

  // Configured clients, then those registered at /register (RFC 7591).
  app.get("/debug/ui", async (c) => c.html(debugPage({ issuer: p.issuerFor(c.req.url), clients: await p.allClients(), jwksModes: JWKS_MODES })));

  app.get("/debug/jwks-mode", (c) => c.json({ mode: p.jwksMode() }));
  app.post("/debug/jwks-mode", async (c) => {
    const body = await jsonBody(c);
    const mode = body.ok ? (body.value as { mode?: unknown } | null)?.mode : undefined;
    if (typeof mode !== "string" || !JWKS_MODES.includes(mode as JwksMode)) return badRequest(c);
    await p.setJwksMode(mode as JwksMode);
    return c.json({ mode });
  });

  // Ends the configured issuer's sessions, or an issuer by path's ({"issuer": "<name>"}), or those
  // of one subject ({"sub": "..."}): clients with a back-channel logout URI are told, as at /end-session.
  app.post("/debug/sessions/end", async (c) => {
    const text = await readBodyText(c);
    let sub: unknown;
    let issuer: unknown;
    if (text.trim() !== "") {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return badRequest(c, "body must be a JSON object");
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) return badRequest(c, "body must be a JSON object");
      sub = (value as { sub?: unknown }).sub;
      if (sub !== undefined && (typeof sub !== "string" || sub === "")) return badRequest(c, "sub must be a non-empty string");
      issuer = (value as { issuer?: unknown }).issuer;
      if (issuer !== undefined && (typeof issuer !== "string" || !PATH_ISSUER_NAME.test(issuer))) {
        return badRequest(c, "issuer must name an issuer by path (one path segment)");
      }
    }
    const target = issuer === undefined ? p : p.root.pathIssuer(issuer as string);
    const ended = sub === undefined ? await endAllSessions(target) : await endSubjectSessions(target, sub as string);
    return c.json({ ended });
  });

  app.post("/debug/reset", async (c) => {
    // Every session ends: clients with a back-channel logout URI are told first.
    await notifyExpiredSessions(p, true);
    await p.reset(RESETTABLE_KINDS);
    p.options.requestLog?.clear();
    return c.json({ reset: true });
  });

  // New generated keys (see Provider.rotateKeys); every instance on the same state sees them.
  app.post("/debug/keys/rotate", async (c) => {
    if (p.hasConfiguredKeys()) {
      return c.json(
        { error: "invalid_request", error_description: "signing keys are configured (IDP_SIGNING_KEYS or --signing-keys-file): rotate them there" },
        409,
      );
    }
    const ring = await p.rotateKeys();
    return c.json({ rotated: true, jwks: JSON.parse(ring.jwksBody) });
  });

  app.post("/debug/clock", async (c) => {
    const body = await jsonBody(c);
    const value = body.ok ? (body.value as { advance_seconds?: unknown } | null)?.advance_seconds : undefined;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 10 * 365 * 86400) {
      return badRequest(c, "advance_seconds must be a non-negative number of seconds");
    }
    await p.advanceClock(value);
    // Sessions the move made expire end now, as far as their clients are concerned.
    await notifyExpiredSessions(p);
    return c.json({ now: rfc3339(p.now()), offset_seconds: p.clockOffsetMs() / 1000 });
  });

  app.post("/debug/scenarios", async (c) => {
    const body = await jsonBody(c);
    if (!body.ok) return badRequest(c, body.deep ? `body is nested deeper than ${MAX_JSON_DEPTH} levels` : "body must be JSON");
    try {
      const user = parseSeededUser(body.value);
      await p.addScenario(user);
      return c.json(describeScenario(user), 201, NO_STORE);
    } catch (err) {
      if (err instanceof UsersDocumentError) return badRequest(c, err.message);
      throw err;
    }
  });
}
