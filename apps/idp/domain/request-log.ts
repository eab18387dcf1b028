/**
 * The requests the provider received, for test authors (`GET /debug/requests`, like navikt's
 * mock-oauth2-server `takeRequest()`): a bounded ring per instance (the newest RING_SIZE), kept
 * raw while recording (a few fields copied, no parsing on the request path) and described
 * (parameters parsed, secrets masked) only when listed.
 *
 * Runtime-free; the routes feed it (routes/debug-requests.ts).
 */
import { secretPrefix } from "./random.ts";

/** How many requests are kept (the oldest go first). */
const RING_SIZE = 500;

/** What is copied off a request and its answer while recording. */
export interface RawRequest {
  /** Provider-clock ms. */
  at: number;
  method: string;
  /** The issuer the request was for (an issuer by path has its own). */
  issuer: string;
  /** The endpoint's path below the issuer (`/token`). */
  endpoint: string;
  query: string;
  /** A form body as sent (only form bodies are read by the endpoints recorded). */
  body?: string;
  authorization?: string;
  dpop: boolean;
  status: number;
  /** The OAuth error the answer carried, when the handler threw one. */
  error?: string;
  /** The redirect's Location (an authorization error goes back in its query or fragment). */
  location?: string;
  wwwAuthenticate?: string;
  /** The client when only the handler knew it (a token's client at userinfo). */
  client_id?: string;
}

/** A recorded request as listed. */
export interface RecordedRequest {
  id: number;
  at: string;
  method: string;
  issuer: string;
  endpoint: string;
  client_id: string | null;
  /** Query and form parameters, secrets masked (MASKED, or an 8-character prefix and "…"). */
  params: Record<string, string>;
  /** `Basic <client_id>:***`, `Bearer <prefix>…`, `DPoP <prefix>…`. */
  authorization?: string;
  dpop?: true;
  status: number;
  /** The OAuth error of the answer (JSON body, redirect or WWW-Authenticate), if any. */
  error?: string;
}

export const MASKED = "***";
/** Never shown, not even in part: they prove who the caller is. */
const HIDDEN = new Set(["client_secret", "password", "code_verifier", "client_assertion", "assertion"]);
/** Shown as their first 8 characters, as the other debug listings show secrets, so a test can match them. */
const PREFIXED = new Set([
  "code",
  "refresh_token",
  "access_token",
  "token",
  "device_code",
  "subject_token",
  "actor_token",
  "id_token_hint",
  "logout_token",
  "request",
]);

/**
 * The value as listed. The name is matched whatever its case and without a `[...]` suffix: a client
 * that sends its secret as `Client_Secret` or `password[]` is refused, yet the secret was sent.
 */
export function maskParam(name: string, value: string): string {
  const key = name.toLowerCase().replace(/\[[^\]]*\]$/, "");
  if (HIDDEN.has(key)) return MASKED;
  if (PREFIXED.has(key)) return value.length > 8 ? `${secretPrefix(value)}…` : MASKED;
  return value;
}

/** The schemes whose credentials are shown as a prefix (a token); any other header is hidden whole. */
const TOKEN_SCHEMES = new Set(["bearer", "dpop"]);

function maskAuthorization(header: string): { text: string; clientId?: string } {
  const m = /^(\S+)\s+(.*)$/.exec(header.trim());
  if (!m) return { text: MASKED };
  const scheme = m[1]!;
  if (scheme.toLowerCase() === "basic") {
    try {
      const decoded = atob(m[2]!.trim());
      const colon = decoded.indexOf(":");
      // Without a colon there is no client id to show: the text may be the secret alone.
      if (colon < 0) return { text: `Basic ${MASKED}` };
      const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "));
      return { text: `Basic ${clientId}:${MASKED}`, clientId };
    } catch {
      return { text: `Basic ${MASKED}` };
    }
  }
  if (!TOKEN_SCHEMES.has(scheme.toLowerCase())) return { text: MASKED };
  return { text: `${scheme} ${maskParam("token", m[2]!.trim())}` };
}

/** `error` of a redirect's query or fragment, or of a `WWW-Authenticate` challenge. */
function answerError(raw: RawRequest): string | undefined {
  if (raw.error !== undefined) return raw.error;
  if (raw.location !== undefined) {
    try {
      const url = new URL(raw.location);
      const error = url.searchParams.get("error") ?? new URLSearchParams(url.hash.slice(1)).get("error");
      if (error !== null) return error;
    } catch {
      // a relative Location: no error in it
    }
  }
  if (raw.wwwAuthenticate !== undefined) return /error="([^"]*)"/.exec(raw.wwwAuthenticate)?.[1];
  return undefined;
}

/** The members of a JSON object body (registration metadata), each as text. */
function jsonMembers(body: string): [string, string][] | undefined {
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    return Object.entries(value).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]);
  } catch {
    return undefined;
  }
}

export function describeRequest(id: number, raw: RawRequest): RecordedRequest {
  const params: Record<string, string> = {};
  // JSON (an object's members; a list or broken JSON: nothing), else a form: JSON read as a form
  // would list its text whole as a parameter name, secrets and all.
  const body = raw.body === undefined ? [] : /^[[{]/.test(raw.body.trimStart()) ? jsonMembers(raw.body) ?? [] : new URLSearchParams(raw.body);
  for (const source of [new URLSearchParams(raw.query), body]) {
    for (const [name, value] of source) params[name] = maskParam(name, value);
  }
  const auth = raw.authorization === undefined ? undefined : maskAuthorization(raw.authorization);
  const out: RecordedRequest = {
    id,
    at: new Date(raw.at).toISOString(),
    method: raw.method,
    issuer: raw.issuer,
    endpoint: raw.endpoint,
    client_id: raw.client_id ?? auth?.clientId ?? params.client_id ?? null,
    params,
    status: raw.status,
  };
  if (auth) out.authorization = auth.text;
  if (raw.dpop) out.dpop = true;
  const error = answerError(raw);
  if (error !== undefined) out.error = error;
  return out;
}

export interface RequestFilter {
  client_id?: string;
  /** `/token` or `token`. */
  endpoint?: string;
}

/** The ring: recording is an array write; listing parses and masks. */
export class RequestLog {
  private readonly ring: (RawRequest | undefined)[];
  /** Id of the next request (ids grow by one from 1; the ring holds the last `size`). */
  private next = 1;

  constructor(readonly size = RING_SIZE) {
    this.ring = new Array(size);
  }

  record(raw: RawRequest): void {
    this.ring[this.next % this.size] = raw;
    this.next++;
  }

  /** Oldest first (newest last), filtered. */
  list(filter: RequestFilter = {}): RecordedRequest[] {
    const endpoint = filter.endpoint === undefined ? undefined : "/" + filter.endpoint.replace(/^\/+/, "");
    const out: RecordedRequest[] = [];
    for (let id = Math.max(1, this.next - this.size); id < this.next; id++) {
      const raw = this.ring[id % this.size];
      if (raw === undefined || (endpoint !== undefined && raw.endpoint !== endpoint)) continue;
      const described = describeRequest(id, raw);
      if (filter.client_id !== undefined && described.client_id !== filter.client_id) continue;
      out.push(described);
    }
    return out;
  }

  /** Forgets every request; returns how many were kept. */
  clear(): number {
    const kept = this.ring.filter((raw) => raw !== undefined).length;
    this.ring.fill(undefined);
    return kept;
  }
}
