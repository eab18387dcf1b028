/**
 * Shared helpers for the identity provider's contract suites: starting a provider, the browser
 * login "interaction" as plain fetch, openid-client configurations, DPoP proofs and the debug
 * interface. Not a test file; every `idp-*.test.ts` imports from here.
 */
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import * as client from "openid-client";
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHranaServer } from "../fixtures/hrana-server.ts";
import { startRoundRobin } from "../runtimes/round-robin.ts";
import { currentRuntime, startService, type RunningService } from "../runtimes/service.ts";

export { client };

/** Every builtin client accepts the configured redirect URIs; this one is in the default list. */
export const REDIRECT_URI = "http://127.0.0.1:3000/callback";
export const WEB_APP_SECRET = "web-app-secret";
/** `sub` of the synthetic user typed as `alice` (decisions.md). */
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
 * apps/idp/edge.ts, configured by environment variables only: under `deno serve` with its state
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
    : await startService("idp", { env: { ...env, IDP_STATE: database.url }, serveModule: "apps/idp/edge.ts" });
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
// Raw HTTP helpers

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** A body read as text, parsed as JSON; a body that is not JSON becomes `{ _text }`, so failures show it. */
export function jsonOrText<T = Record<string, unknown>>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return { _text: text } as T;
  }
}

async function asJson<T>(res: Response): Promise<JsonResponse<T>> {
  return { status: res.status, headers: res.headers, body: jsonOrText<T>(await res.text()) };
}

export async function postForm(
  url: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params),
    redirect: "manual",
  });
  return asJson(res);
}

export function basicAuth(clientId: string, secret: string): string {
  return "Basic " + btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`);
}

export async function getJson<T = Record<string, unknown>>(url: string, headers: Record<string, string> = {}): Promise<JsonResponse<T>> {
  return asJson<T>(await fetch(url, { headers }));
}

// ---------------------------------------------------------------------------------------------
// Debug interface

export interface DebugCounts {
  sessions: number;
  codes: number;
  tokens: number;
  refresh_tokens: number;
  device_grants: number;
  replay_entries: number;
}

export async function debugJson<T = any>(base: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}/debug${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`/debug${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export async function debugCounts(base: string): Promise<DebugCounts> {
  return (await debugJson<{ counts: DebugCounts }>(base, "")).counts;
}

/** Moves the provider's clock forward (no real sleeping). */
export function advanceClock(base: string, seconds: number): Promise<{ now: string; offset_seconds: number }> {
  return debugJson(base, "/clock", { advance_seconds: seconds });
}

export function resetIdp(base: string): Promise<{ reset: boolean }> {
  return debugJson(base, "/reset", {});
}

// ---------------------------------------------------------------------------------------------
// DPoP proofs crafted by hand (for the negative cases openid-client never produces)

export interface ProofKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  alg: "ES256" | "RS256";
  thumbprint: string;
}

export async function proofKey(alg: "ES256" | "RS256" = "ES256"): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, alg, thumbprint: await calculateJwkThumbprint(publicJwk) };
}

export async function accessTokenHash(accessToken: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken));
  return Buffer.from(digest).toString("base64url");
}

export interface ProofOptions {
  htm: string;
  htu: string;
  accessToken?: string;
  /** Override claims (e.g. `iat`, `jti`, `ath: undefined`). */
  claims?: Record<string, unknown>;
  /** Override the header's JWK (e.g. include the private key). */
  jwk?: JWK;
  typ?: string;
}

export async function dpopProof(key: ProofKey, options: ProofOptions): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: crypto.randomUUID(),
    htm: options.htm,
    htu: options.htu,
    iat: Math.floor(Date.now() / 1000),
  };
  if (options.accessToken) claims.ath = await accessTokenHash(options.accessToken);
  for (const [k, v] of Object.entries(options.claims ?? {})) {
    if (v === undefined) delete claims[k];
    else claims[k] = v;
  }
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, typ: options.typ ?? "dpop+jwt", jwk: options.jwk ?? key.publicJwk })
    .sign(key.privateKey);
}

/** GET /userinfo with an Authorization header (and optionally a DPoP proof). */
export async function userinfo(url: string, authorization: string, proof?: string): Promise<JsonResponse> {
  const headers: Record<string, string> = { authorization };
  if (proof) headers.dpop = proof;
  return asJson(await fetch(url, { headers }));
}

// ---------------------------------------------------------------------------------------------
// HTML

/** The attributes of the first `<input>` whose `name` is `name`, or undefined. */
export function inputByName(html: string, name: string): Record<string, string> | undefined {
  for (const match of html.matchAll(/<input\b[^>]*>/gi)) {
    const attrs = attributes(match[0]);
    if (attrs.name === name) return attrs;
  }
  return undefined;
}

export function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    const name = m[1]!.toLowerCase();
    if (name === "input") continue;
    out[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? "");
  }
  return out;
}

export function decodeEntities(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** Category names of the login page's quick-pick groups, in page order. */
export function loginCategories(html: string): string[] {
  return [...html.matchAll(/<section\b[^>]*\bdata-category\s*=\s*"([^"]*)"/gi)].map((m) => decodeEntities(m[1]!));
}

/** Logins of the quick-pick buttons, in page order. */
export function quickPickLogins(html: string): string[] {
  return [...html.matchAll(/<button\b[^>]*\bdata-login\s*=\s*"([^"]*)"/gi)].map((m) => decodeEntities(m[1]!));
}

/** Text of the element with the given id (tags stripped), or undefined. */
export function elementText(html: string, id: string): string | undefined {
  const m = new RegExp(`<([a-z0-9]+)\\b[^>]*\\bid\\s*=\\s*"${id}"[^>]*>([\\s\\S]*?)</\\1>`, "i").exec(html);
  return m ? decodeEntities(m[2]!.replace(/<[^>]*>/g, "")).trim() : undefined;
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
