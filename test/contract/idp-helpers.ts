/**
 * Shared helpers for the identity provider's contract suites: starting a provider, the browser
 * login "interaction" as plain fetch, openid-client configurations, and failing a test on a server
 * error. Raw HTTP, the debug interface, hand-made DPoP proofs and reading HTML are in
 * idp-http-helpers.ts, re-exported here. Not a test file; every `idp-*.test.ts` imports from here.
 */
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import * as client from "openid-client";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHranaServer } from "../fixtures/hrana-server.ts";
import { startRoundRobin } from "../runtimes/round-robin.ts";
import { currentRuntime, type RunningService, startService } from "../runtimes/service.ts";

export { client };
// The suites import every helper from here.
export * from "./idp-http-helpers.ts";

/** Every builtin client accepts the configured redirect URIs; this one is in the default list. */
export const REDIRECT_URI = "http://127.0.0.1:3000/callback";
export const WEB_APP_SECRET = "web-app-secret";
/** `sub` of the synthetic user typed as `alice` (docs/idp.md#users-and-scenarios). */
export const ALICE_SUB = "user-NfTfZYYJ1idFA58J4RDISA";
export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
export const USER_CODE = /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{4}-[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{4}$/;
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export interface Idp {
  svc: RunningService;
  /** Where the tests reach the provider (`http://127.0.0.1:<port>`). */
  base: string;
  /** The issuer the provider advertises (equals `base` unless a path-based issuer is configured). */
  issuer: string;
}

/**
 * In the `node-pair` and `deno-pair` projects (TEST_IDP_INSTANCES=2) every suite talks to two
 * instances on one state database behind a round-robin proxy, so consecutive requests of one
 * flow land on different instances.
 */
export const INSTANCES = Number(process.env.TEST_IDP_INSTANCES ?? 1);

/**
 * In the `deno-edge` and `workerd-edge` projects (TEST_IDP_ENTRY=edge) the provider is
 * apps/idp/entries/edge.ts, configured by environment variables only: under `deno serve` with its state
 * in a database file, and as a module Worker (no Durable Object) with its state behind a libSQL
 * server (a test Hrana server on a file).
 */
export const EDGE = process.env.TEST_IDP_ENTRY === "edge";

/**
 * Starts one provider, or (see INSTANCES) two behind a round-robin proxy. `IDP_ISSUER={origin}`
 * makes the issuer the origin the tests call, on every runtime, so openid-client's issuer checks
 * hold without knowing the port in advance.
 */
export async function startIdp(env: Record<string, string> = {}, issuerPath = ""): Promise<Idp> {
  const settings = { IDP_ISSUER: `{origin}${issuerPath}`, ...env };
  const svc = EDGE ? await startEdge(settings) : INSTANCES > 1 ? await startInstances(settings, INSTANCES) : await startService("idp", { env: settings });
  return { svc, base: svc.baseUrl, issuer: svc.baseUrl + issuerPath };
}

async function startEdge(env: Record<string, string>): Promise<RunningService> {
  const database = stateDatabase();
  const server = currentRuntime() === "workerd" ? await startHranaServer(database.url.slice("file:".length), { authToken: "edge-test-token" }) : undefined;
  const svc = server
    ? await startService("idp", { env: { ...env, IDP_STATE: server.url, IDP_STATE_AUTH_TOKEN: "edge-test-token" }, wranglerEnv: "idp-edge" })
    : await startService("idp", { env: { ...env, IDP_STATE: database.url }, serveModule: "apps/idp/entries/edge.ts" });
  const stop = (how: () => Promise<void>) => async () => {
    await how();
    await server?.close();
    database.cleanup();
  };
  return { ...svc, stop: stop(svc.stop), kill: stop(svc.kill) };
}

/** A fresh state database file for instances to share (removed with `cleanup`). */
export function stateDatabase(): { url: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "idp-state-"));
  return { url: `file:${join(dir, "idp.db")}`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `count` instances on one state database (`IDP_STATE`, a fresh file unless given), started at
 * the same moment (so they race for migrations and keys), behind a round-robin proxy. Stopping
 * it stops the proxy and every instance, and removes a database it created.
 */
export async function startInstances(env: Record<string, string>, count: number, state?: string): Promise<RunningService> {
  const own = state === undefined ? stateDatabase() : undefined;
  const settings = { ...env, IDP_STATE: state ?? own!.url };
  const instances = await Promise.all(Array.from({ length: count }, () => startService("idp", { env: settings })));
  const proxy = await startRoundRobin(instances.map((i) => i.port));
  const end = async (how: (i: RunningService) => Promise<void>) => {
    await proxy.close();
    await Promise.all(instances.map(how));
    own?.cleanup();
  };
  return {
    runtime: currentRuntime(),
    baseUrl: proxy.baseUrl,
    port: proxy.port,
    output: () => instances.map((i) => i.output()).join(""),
    stop: () => end((i) => i.stop()),
    kill: () => end((i) => i.kill()),
  };
}

// ---------------------------------------------------------------------------------------------
// openid-client

/**
 * An openid-client configuration for one client, from discovery. ID token signatures are checked
 * against /jwks (non-repudiation checks), so key scenarios are verified the way a careful RP does.
 */
export async function rp(
  issuer: string,
  clientId = "dev-client",
  auth: client.ClientAuth = client.None(),
  metadata?: Partial<client.ClientMetadata>,
): Promise<client.Configuration> {
  return client.discovery(new URL(issuer), clientId, metadata, auth, {
    execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
  });
}

export type PkceMethod = "S256" | "plain" | "none";

export interface AuthRequest {
  url: URL;
  state: string;
  nonce: string;
  verifier?: string;
}

/** Builds an authorization URL with state, nonce and (unless `none`) a PKCE challenge. */
export async function authRequest(
  config: client.Configuration,
  options: { pkce?: PkceMethod; scope?: string; redirectUri?: string; params?: Record<string, string> } = {},
): Promise<AuthRequest> {
  const state = client.randomState();
  const nonce = client.randomNonce();
  const params: Record<string, string> = {
    redirect_uri: options.redirectUri ?? REDIRECT_URI,
    scope: options.scope ?? "openid email profile",
    response_type: "code",
    state,
    nonce,
  };
  const method = options.pkce ?? "S256";
  let verifier: string | undefined;
  if (method !== "none") {
    verifier = client.randomPKCECodeVerifier();
    params.code_challenge = method === "S256" ? await client.calculatePKCECodeChallenge(verifier) : verifier;
    params.code_challenge_method = method;
  }
  Object.assign(params, options.params);
  return { url: client.buildAuthorizationUrl(config, params), state, nonce, verifier };
}

// ---------------------------------------------------------------------------------------------
// The browser interaction (plain fetch; no server listens at the redirect URI)

/** The `idp_session` cookie pair (`idp_session=…`) a response sets, if any. */
export function sessionCookie(res: Response): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(";")[0]!.trim();
    if (pair.startsWith("idp_session=") && pair.length > "idp_session=".length) return pair;
  }
  return undefined;
}

/** The raw Set-Cookie line for `idp_session`, if any (to check its attributes). */
export function sessionSetCookie(res: Response): string | undefined {
  return res.headers.getSetCookie().find((line) => line.trim().startsWith("idp_session="));
}

export function getAuthorize(url: URL | string, cookie?: string): Promise<Response> {
  return fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
}

/** POST /authorize with every parameter of the authorization URL plus the credentials. */
export function postLogin(url: URL, login: string, password = "", cookie?: string): Promise<Response> {
  const form = new URLSearchParams(url.searchParams);
  form.set("login", login);
  form.set("password", password);
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (cookie) headers.cookie = cookie;
  return fetch(url.origin + url.pathname, { method: "POST", body: form, redirect: "manual", headers });
}

export interface LoginResult {
  /** The redirect back to the client (`redirect_uri?code=…&state=…&iss=…`). */
  callback: URL;
  cookie: string | undefined;
  html: string;
}

/** GET the authorization URL (expects the login page), then POST the form; expects a 302. */
export async function interactiveLogin(url: URL, login: string, password = ""): Promise<LoginResult> {
  const page = await getAuthorize(url);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`GET authorize: expected the login page, got ${page.status}: ${html.slice(0, 300)}`);
  const res = await postLogin(url, login, password);
  const body = await res.text();
  const location = res.headers.get("location");
  if (res.status !== 302 || !location) throw new Error(`POST /authorize: expected 302, got ${res.status}: ${body.slice(0, 300)}`);
  return { callback: new URL(location, url), cookie: sessionCookie(res), html };
}

export interface CodeFlowResult {
  tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  claims: client.IDToken;
  cookie: string | undefined;
  callback: URL;
  request: AuthRequest;
}

export interface CodeFlowOptions {
  login?: string;
  password?: string;
  pkce?: PkceMethod;
  scope?: string;
  params?: Record<string, string>;
  dpop?: client.DPoPHandle;
}

/** A whole authorization code flow through openid-client: login, then the code grant. */
export async function codeFlow(config: client.Configuration, options: CodeFlowOptions = {}): Promise<CodeFlowResult> {
  const request = await authRequest(config, options);
  const login = await interactiveLogin(request.url, options.login ?? "alice", options.password ?? "");
  const tokens = await redeem(config, login.callback, request, options.dpop);
  return { tokens, claims: tokens.claims()!, cookie: login.cookie, callback: login.callback, request };
}

/** Exchanges the code in `callback` with openid-client's full checks. */
export function redeem(config: client.Configuration, callback: URL, request: AuthRequest, dpop?: client.DPoPHandle) {
  return client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce, idTokenExpected: true },
    undefined,
    dpop ? { DPoP: dpop } : undefined,
  );
}

/** Runs a promise that must reject and hands back the error (an OAuth error from openid-client). */
export async function rejection(promise: Promise<unknown>): Promise<{ error?: string; status?: number; message: string; code?: string; claim?: string }> {
  try {
    await promise;
  } catch (err) {
    type Cause = { error?: string; status?: number; claim?: string; cause?: { claim?: string } };
    const e = err as { error?: string; status?: number; message: string; code?: string; cause?: Cause };
    // openid-client wraps oauth4webapi's error, whose cause names the failing JWT claim.
    const claim = e.cause?.claim ?? e.cause?.cause?.claim;
    return { error: e.error ?? e.cause?.error, status: e.status ?? e.cause?.status, message: e.message, code: e.code, claim };
  }
  throw new Error("expected the call to be rejected, but it succeeded");
}

// ---------------------------------------------------------------------------------------------
// Never a 500 for anything but a deliberate failure

/**
 * Registers hooks that watch every fetch this test file makes (openid-client's included) and fail
 * a test during which the provider answered 5xx. Files that provoke deliberate 500s (scenarios,
 * key endpoint modes) do not use it.
 */
export function failOnServerErrors(): void {
  const seen: string[] = [];
  let original: typeof fetch | undefined;
  beforeAll(() => {
    original = globalThis.fetch;
    const inner = original;
    globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const res = await inner(input, init);
      if (res.status >= 500) {
        const method = init?.method ?? (input instanceof Request ? input.method : "GET");
        const url = input instanceof Request ? input.url : String(input);
        seen.push(`${method} ${url} -> ${res.status}`);
      }
      return res;
    };
  });
  afterAll(() => {
    if (original) globalThis.fetch = original;
  });
  afterEach(() => {
    const found = seen.splice(0);
    expect(found, "the provider answered with a server error").toEqual([]);
  });
}

// ---------------------------------------------------------------------------------------------
// The usual suite setup

/** The provider a suite shares (see useProvider): the Idp fields and dev-client's configuration. */
export interface Provider extends Idp {
  /** openid-client's configuration for dev-client (rp). */
  readonly config: client.Configuration;
}

/**
 * The setup most suites share: failOnServerErrors, one provider started before the file's tests
 * (startIdp's arguments) with dev-client's configuration, stopped after them. The fields are
 * getters, so read them inside tests and hooks, not while the file is collected.
 */
export function useProvider(env: Record<string, string> = {}, issuerPath = ""): Provider {
  let idp: Idp | undefined;
  let config: client.Configuration | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the provider is not started yet (read it inside a test or hook)");
    return value;
  };
  failOnServerErrors();
  beforeAll(async () => {
    idp = await startIdp(env, issuerPath);
    config = await rp(idp.issuer);
  });
  afterAll(() => idp?.svc.stop());
  return {
    get svc() {
      return started(idp).svc;
    },
    get base() {
      return started(idp).base;
    },
    get issuer() {
      return started(idp).issuer;
    },
    get config() {
      return started(config);
    },
  };
}

/** A loopback back-channel logout receiver: the logout tokens it was sent. */
export async function logoutReceiver(): Promise<{ url: string; tokens: string[]; close(): Promise<void> }> {
  const tokens: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const token = new URLSearchParams(Buffer.concat(chunks).toString("utf8")).get("logout_token");
      if (token) tokens.push(token);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/backchannel`, tokens, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
