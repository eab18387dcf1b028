/**
 * An identity provider for your own tests, in the same Node process, on a free loopback port:
 *
 *   const idp = await startIdp({ users: [{ login: "carol", password: "pw" }] });
 *   // discovery at `${idp.issuer}/.well-known/openid-configuration`
 *   await idp.advanceClock(3600);   // tokens expire
 *   await idp.stop();
 *
 * The debug operations go through the provider's own loopback-only `/debug/*` endpoints over HTTP,
 * exactly as a test in another process would use them. Node only (it serves through
 * lib/adapters/node/index.ts); other runtimes start the CLI instead (`serve-dev`).
 */
import { nodeRuntime } from "#lib/adapters/node";
import { createLogger, type Logger } from "#lib/log";
import type { RunningServer } from "#lib/runtime";
import { type ClientConfig, createIdp } from "./app.ts";
import type { SeededUserInput } from "./domain/users.ts";
import type { RecordedRequest, RequestFilter } from "./domain/request-log.ts";

export type { RecordedRequest, RequestFilter } from "./domain/request-log.ts";

export type JwksMode = "normal" | "500" | "slow" | "empty";

export interface StartIdpOptions {
  /** Seeded users: a list, or a users document `{users: [...]}` (as in a users file). */
  users?: SeededUserInput[] | { users: SeededUserInput[] };
  /** Extra clients (e.g. one whose redirect URI is your test's callback server). */
  clients?: ClientConfig[];
  /** Path of a path-based issuer, e.g. `/realms/dev` (default: none). */
  issuerPath?: string;
  /** The configured client (default `dev-client`), its secret and redirect URIs, as `--client-id` etc. */
  clientId?: string;
  clientSecret?: string;
  redirectUris?: string[];
  /** More post-logout redirect URIs of the configured client, as `--post-logout-redirect-uris`. */
  postLogoutRedirectUris?: string[];
  /** Origins whose pages may call the provider beyond the redirect URIs' (`*`: any), as `--cors-origins`. */
  corsOrigins?: string[];
  /** Private JWK set, as `--signing-keys-file` (default: keys generated at start). */
  signingKeys?: unknown;
  /** Delay of the `token-slow` scenario and of the `slow` key mode, in ms (default 10000 each). */
  tokenSlowMs?: number;
  jwksSlowMs?: number;
  /** "jwt": RFC 9068 access tokens (default "opaque"), with `aud` = `accessTokenAudience` or the client id. */
  accessTokenFormat?: "opaque" | "jwt";
  accessTokenAudience?: string;
  /** Claims per client, scope or subject: `{mappings: [{client?, scope?, sub?, claims | id_token | access_token | userinfo}]}` (docs/idp.md). */
  claimMappings?: unknown;
  /** Listen host (default 127.0.0.1) and port (default 0: a free one). */
  hostname?: string;
  port?: number;
  /** Default: silent. */
  logger?: Logger;
}

export interface StartedIdp {
  /** The issuer, e.g. `http://127.0.0.1:41234` or `http://127.0.0.1:41234/realms/dev`. */
  issuer: string;
  /** Base URL of the server (`http://127.0.0.1:<port>`). */
  url: string;
  port: number;
  /** Clears sessions, codes, tokens, grants, run-time scenarios; key mode normal; clock offset 0. */
  reset(): Promise<void>;
  setJwksMode(mode: JwksMode): Promise<void>;
  /** Moves the provider's clock forward: codes, tokens, sessions and grants expire accordingly. */
  advanceClock(seconds: number): Promise<void>;
  /** Registers a scenario at run time (same fields as a seeded user). */
  addScenario(scenario: SeededUserInput): Promise<void>;
  /** The requests the provider received, newest last, secrets masked (GET /debug/requests), like navikt's takeRequest(). */
  requests(filter?: RequestFilter): Promise<RecordedRequest[]>;
  /** Forgets the recorded requests. */
  clearRequests(): Promise<void>;
  stop(): Promise<void>;
}

/** A `/debug/*` call that must succeed; anything else is a test-setup error worth a clear message. */
async function debugCall(url: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`idp ${path}: ${response.status} ${text}`);
  return text === "" ? undefined : JSON.parse(text);
}

export async function startIdp(options: StartIdpOptions = {}): Promise<StartedIdp> {
  const hostname = options.hostname ?? "127.0.0.1";
  const issuerPath = (options.issuerPath ?? "").replace(/\/+$/, "");
  if (issuerPath !== "" && !issuerPath.startsWith("/")) throw new Error(`issuerPath must start with "/", got "${options.issuerPath}"`);
  const logger = options.logger ?? createLogger({ level: "silent" });

  // The port is known only once the socket listens, and the issuer contains it: the app is built
  // right after, and the (not yet possible) early requests wait for it.
  let handler: ((request: Request, env: unknown) => Response | Promise<Response>) | undefined;
  let ready!: () => void;
  const built = new Promise<void>((resolve) => (ready = resolve));
  const server: RunningServer = await nodeRuntime().serve(
    async (request, env) => {
      if (!handler) await built;
      return handler!(request, env);
    },
    { hostname, port: options.port ?? 0 },
  );
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  const url = `http://${host}:${server.port}`;
  const issuer = url + issuerPath;
  try {
    const { app } = await createIdp({
      issuer,
      users: options.users,
      clients: options.clients,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      redirectUris: options.redirectUris,
      postLogoutRedirectUris: options.postLogoutRedirectUris,
      corsOrigins: options.corsOrigins,
      signingKeys: options.signingKeys,
      tokenSlowMs: options.tokenSlowMs,
      jwksSlowMs: options.jwksSlowMs,
      accessTokenFormat: options.accessTokenFormat,
      accessTokenAudience: options.accessTokenAudience,
      claimMappings: options.claimMappings,
      logger,
    });
    handler = (request, env) => app.fetch(request, env);
    ready();
  } catch (err) {
    await server.close();
    throw err;
  }

  return {
    issuer,
    url,
    port: server.port,
    reset: async () => void (await debugCall(url, "/debug/reset", {})),
    setJwksMode: async (mode) => void (await debugCall(url, "/debug/jwks-mode", { mode })),
    advanceClock: async (seconds) => void (await debugCall(url, "/debug/clock", { advance_seconds: seconds })),
    addScenario: async (scenario) => void (await debugCall(url, "/debug/scenarios", scenario)),
    requests: async (filter = {}) => {
      const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== undefined) as [string, string][]).toString();
      return (await debugCall(url, `/debug/requests${query ? `?${query}` : ""}`)) as RecordedRequest[];
    },
    clearRequests: async () => {
      const response = await fetch(`${url}/debug/requests`, { method: "DELETE" });
      if (!response.ok) throw new Error(`idp DELETE /debug/requests: ${response.status} ${await response.text()}`);
    },
    stop: () => server.close(),
  };
}
