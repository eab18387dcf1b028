// deno-lint-ignore-file no-explicit-any -- JSON read back from a service, typed where it is checked
/**
 * Helpers for the identity provider's contract suites below openid-client: raw HTTP calls, the
 * debug interface, DPoP proofs crafted by hand, and reading the provider's HTML. Not a test file;
 * the suites import it through idp-helpers.ts.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

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
