/**
 * The request object a handler sees (spec: Request), built once per request on the host side and
 * copied into the sandbox as plain data. Header keys are lower case (decisions.md); a repeated
 * query key gives a list; JSON and form bodies are parsed, anything else is a string. A JSON body
 * that does not parse is 400 before any authentication.
 */
import { parse as parseCookies } from "hono/utils/cookie";
import type { HostValue } from "../../lib/sandbox/index.ts";
import type { HostSession } from "./services.ts";

export interface ScriptRequest {
  method: string;
  url: string;
  path: string;
  query: Record<string, string | string[]>;
  params: Record<string, string>;
  headers: Record<string, string>;
  cookies: Record<string, string>;
  session: HostSession | null;
  ip: string;
  body: HostValue;
  rawBody: string;
}

export type BodyErrorCode = "INVALID_JSON" | "BODY_TOO_LARGE";

export class RequestBodyError extends Error {
  readonly code: BodyErrorCode;
  readonly status: 400 | 413;
  constructor(code: BodyErrorCode, message: string) {
    super(message);
    this.name = "RequestBodyError";
    this.code = code;
    this.status = code === "BODY_TOO_LARGE" ? 413 : 400;
  }
}

/** Repeated keys become lists, in order. */
export function multiMap(pairs: Iterable<[string, string]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of pairs) {
    const had = out[k];
    out[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return { ...out };
}

export function headerMap(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => (out[key] = value)); // Headers keys are already lower case
  return out;
}

export function cookieMap(headers: Headers): Record<string, string> {
  const header = headers.get("cookie");
  return header ? { ...parseCookies(header) } : {};
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;

/** Reads the body (at most `maxBytes`) and parses it by content type. */
export async function readBody(request: Request, maxBytes: number): Promise<{ body: HostValue; rawBody: string; bytes?: Uint8Array }> {
  // The method first: on @hono/node-server, touching `body` builds a full Request (costly).
  if (request.method === "GET" || request.method === "HEAD" || request.body === null) return { body: null, rawBody: "" };
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw new RequestBodyError("BODY_TOO_LARGE", `the request body is larger than ${maxBytes} bytes`);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > maxBytes) throw new RequestBodyError("BODY_TOO_LARGE", `the request body is larger than ${maxBytes} bytes`);
  const rawBody = new TextDecoder().decode(bytes);
  if (rawBody === "") return { body: null, rawBody, bytes };
  const type = request.headers.get("content-type") ?? "";
  if (JSON_TYPE.test(type)) {
    try {
      return { body: JSON.parse(rawBody) as HostValue, rawBody, bytes };
    } catch (err) {
      throw new RequestBodyError("INVALID_JSON", `the request body is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (FORM_TYPE.test(type)) return { body: multiMap(new URLSearchParams(rawBody)), rawBody, bytes };
  return { body: rawBody, rawBody, bytes };
}

export interface RequestFacts {
  params: Record<string, string>;
  session: HostSession | null;
  ip: string;
  body: HostValue;
  rawBody: string;
  cookies: Record<string, string>;
}

export function scriptRequest(request: Request, url: URL, facts: RequestFacts): ScriptRequest {
  return {
    method: request.method,
    url: request.url,
    path: url.pathname,
    query: multiMap(url.searchParams),
    params: facts.params,
    headers: headerMap(request.headers),
    cookies: facts.cookies,
    session: facts.session,
    ip: facts.ip,
    body: facts.body,
    rawBody: facts.rawBody,
  };
}
