/**
 * Shared by the malformed-input suites of the identity provider (idp-malformed.test.ts: /token and
 * /authorize; idp-malformed-other.test.ts: the other endpoints): the row table's types and request
 * builders, the provider each suite starts, and the check every row gets. Not a test file.
 */
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import {
  authRequest,
  client,
  debugCounts,
  failOnServerErrors,
  type Idp,
  interactiveLogin,
  jsonOrText,
  type JsonResponse,
  postForm,
  REDIRECT_URI,
  resetIdp,
  rp,
  startIdp,
} from "./idp-helpers.ts";

/** A suite's provider and relying-party configuration, filled in by its `beforeAll`. */
export interface MalformedIdp {
  idp: Idp;
  config: client.Configuration;
}

/** Starts a provider (with a seeded user, carol) for the suite, resets it after each test and fails a test on any 5xx. */
export function useMalformedIdp(): MalformedIdp {
  const ctx = {} as MalformedIdp;
  failOnServerErrors();
  beforeAll(async () => {
    ctx.idp = await startIdp({ IDP_USERS: JSON.stringify([{ login: "carol", password: "carol-pw" }]) });
    ctx.config = await rp(ctx.idp.issuer);
  });
  afterAll(() => ctx.idp?.svc.stop());
  afterEach(() => resetIdp(ctx.idp.base));
  return ctx;
}

/** What a row expects. */
export type Expectation =
  | { oauth: string; status: 400 | 401 }
  | { page: 400 | 401; text?: string }
  | { redirectError: string; to?: string }
  | { status: 400 | 401 | 404 | 405; error?: string };

export interface Setup {
  /** An outstanding code for dev-client (S256), its verifier, and the user code of a pending device grant. */
  code: string;
  verifier: string;
  userCode: string;
  accessToken: string;
}

export interface Row {
  name: string;
  /** Needs the setup (a code, a pending device grant, an access token) before the request. */
  setup?: boolean;
  request: (s: Setup) => { method?: string; path: string; headers?: Record<string, string>; body?: string };
  expect: Expectation;
}

export const FORM = { "content-type": "application/x-www-form-urlencoded" };
export const JSON_TYPE = { "content-type": "application/json" };
export const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
/** `params` without `key` at all (as opposed to `key` present and empty). */
export const omit = (params: Record<string, string>, key: string) => Object.fromEntries(Object.entries(params).filter(([k]) => k !== key));
export const post = (path: string, body: string, headers: Record<string, string> = FORM) => ({ method: "POST", path, headers, body });
export const query = (path: string, params: Record<string, string> | string) => ({
  path: `${path}?${typeof params === "string" ? params : new URLSearchParams(params)}`,
});

/** The documented OAuth error answer: the status, a JSON `error` with a string `error_description`, not cached. */
export function expectOAuthError(res: JsonResponse, status: number, error: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("cache-control")).toMatch(/no-store/);
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe("string");
}

/** base64url of `value` as JSON, unpadded: a JWT segment. */
export function b64(value: unknown): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A DPoP-shaped JWT with `alg: none` and no signature. */
export function unsignedProof(htu: string): string {
  const header = { typ: "dpop+jwt", alg: "none", jwk: { kty: "EC", crv: "P-256", x: "AA", y: "AA" } };
  return `${b64(header)}.${b64({ jti: crypto.randomUUID(), htm: "POST", htu, iat: Math.floor(Date.now() / 1000) })}.`;
}

/** A code, a pending device grant and an access token for the rows that need them. */
export async function setUp({ idp, config }: MalformedIdp): Promise<Setup> {
  const request = await authRequest(config);
  const { callback } = await interactiveLogin(request.url, "alice");
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });
  const second = await authRequest(config);
  const { callback: secondCallback } = await interactiveLogin(second.url, "alice");
  const device = await postForm(`${idp.base}/device_authorization`, { client_id: "dev-client", scope: "openid" });
  return {
    code: secondCallback.searchParams.get("code")!,
    verifier: second.verifier!,
    userCode: device.body.user_code as string,
    accessToken: tokens.access_token,
  };
}

/** Runs one row: its request (after the setup it asks for) gets the expected answer, no redirect unless
 * an error redirect is expected, no session cookie, and the stored state (debug counts) is unchanged. */
export async function checkRow(ctx: MalformedIdp, row: Row): Promise<void> {
  const { idp } = ctx;
  const setup = row.setup ? await setUp(ctx) : ({} as Setup);
  const before = await debugCounts(idp.base);
  const r = row.request(setup);
  const res = await fetch(`${idp.base}${r.path}`, { method: r.method ?? "GET", headers: r.headers, body: r.body, redirect: "manual" });
  const text = await res.text();
  const location = res.headers.get("location");
  const e = row.expect;
  if ("oauth" in e) {
    expectOAuthError({ status: res.status, headers: res.headers, body: jsonOrText(text) }, e.status, e.oauth);
  } else if ("page" in e) {
    expect(res.status, text.slice(0, 300)).toBe(e.page);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    if (e.text) expect(text).toContain(e.text);
  } else if ("redirectError" in e) {
    expect(res.status, text.slice(0, 300)).toBe(302);
    const target = new URL(location!);
    expect(target.origin + target.pathname).toBe(e.to ?? REDIRECT_URI);
    expect(target.searchParams.get("error")).toBe(e.redirectError);
    expect(target.searchParams.get("iss")).toBe(idp.issuer);
    expect(target.searchParams.get("state")).toBe("st");
    expect(target.searchParams.get("code")).toBeNull();
  } else {
    expect(res.status, text.slice(0, 300)).toBe(e.status);
    if (e.error) expect(jsonOrText<{ error?: string }>(text).error).toBe(e.error);
  }
  if (!("redirectError" in e)) expect(location, "no redirect for this error").toBeNull();
  expect(res.headers.getSetCookie().some((c) => /^idp_session=[^;]+/.test(c)), "no session cookie is set").toBe(false);
  expect(await debugCounts(idp.base), "stored state is unchanged").toEqual(before);
}

/** Runs `requests` and checks that the stored state (debug counts) is the same afterwards. */
export async function leavesStateUnchanged(base: string, requests: () => Promise<void>) {
  const before = await debugCounts(base);
  await requests();
  expect(await debugCounts(base), "stored state is unchanged").toEqual(before);
}
