/**
 * The request object a handler sees (spec: Request), built once per request on the host side and
 * copied into the sandbox as plain data. Header keys are lower case (docs/routes.md#handlers-context-request-response); a repeated
 * query key gives a list; JSON and form bodies (URL-encoded and multipart) are parsed, anything
 * else is a string. A body that does not parse, or JSON nested too deep, is 400 before any
 * authentication; a body over the limit is 413, counted while it streams.
 */
import { parse as parseCookies } from "hono/utils/cookie";
import { CodedError } from "#lib/errors";
import { BodyLimitError, boundedStream, JsonDepthError, parseJsonBounded, readBoundedBytes } from "#lib/http";
import type { HostValue } from "#lib/sandbox";
import type { HostSession } from "./session.ts";

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

export type BodyErrorCode = "INVALID_JSON" | "JSON_TOO_DEEP" | "INVALID_FORM" | "BODY_UNREADABLE" | "BODY_TOO_LARGE";

export class RequestBodyError extends CodedError<BodyErrorCode> {
  readonly status: 400 | 413 = this.code === "BODY_TOO_LARGE" ? 413 : 400;
}

/** Repeated keys become lists, in order. */
export function multiMap<V>(pairs: Iterable<[string, V]>): Record<string, V | V[]> {
  const out: Record<string, V | V[]> = Object.create(null);
  // Lists grow in place: a key repeated n times costs n, not n² (a 1 MiB form of `a=&a=&...`).
  const lists = new Set<V[]>();
  for (const [k, v] of pairs) {
    const had = out[k];
    if (had === undefined) out[k] = v;
    else if (lists.has(had as V[])) (had as V[]).push(v);
    else {
      const list = [had as V, v];
      lists.add(list);
      out[k] = list;
    }
  }
  return { ...out };
}

export function headerMap(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => (out[key] = value)); // Headers keys are already lower case
  return out;
}

const OWS = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * The same map from header lines as received (ServeEnv.rawHeaders): what web Headers would give,
 * names lower case and sorted, repeated values joined by ", " (cookies by "; "), values without surrounding
 * whitespace, HTTP/2 pseudo-headers left out.
 */
export function headerMapOfLines(lines: readonly string[]): Record<string, string> {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const name = lines[i]!;
    if (name.charCodeAt(0) !== 58 /* : */) pairs.push([name.toLowerCase(), lines[i + 1]!.replace(OWS, "")]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) out[name] = Object.hasOwn(out, name) ? `${out[name]}${name === "cookie" ? "; " : ", "}${value}` : value;
  return out;
}

export function cookieMap(headers: Headers): Record<string, string> {
  const header = headers.get("cookie");
  return header ? { ...parseCookies(header) } : {};
}

const UTF8 = new TextDecoder();
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;
const MULTIPART_TYPE = /^multipart\/form-data\b/i;

/** lib/http/body-limit.ts's refusal as the host's RequestBodyError; anything else as it is. */
const asRequestBodyError = (err: unknown) => (err instanceof BodyLimitError ? new RequestBodyError(err.code, err.message) : err);

/** The body's bytes, never more than `maxBytes` in memory (lib/http/body-limit.ts). */
const readBodyBytes = (request: Request, maxBytes: number, received?: AsyncIterable<Uint8Array>): Promise<Uint8Array> =>
  readBoundedBytes(request, maxBytes, received).catch((err: unknown) => {
    throw asRequestBodyError(err);
  });

/** A body to forward to a mounted app, bounded like `readBodyBytes` (see `boundedStream`). */
export function boundedBody(request: Request, maxBytes: number): ReturnType<typeof boundedStream> {
  try {
    return boundedStream(request, maxBytes);
  } catch (err) {
    throw asRequestBodyError(err);
  }
}

/** Bytes as standard base64 (in slices: spreading a large array into one call overflows). */
export function base64Of(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A file of a multipart/form-data body as the handler sees it: its content as text when it is
 * UTF-8, else base64 (`encoding` says which). */
interface FormFile {
  name: string;
  type: string;
  size: number;
  encoding: "utf8" | "base64";
  content: string;
}

async function formFile(file: File): Promise<FormFile> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const base = { name: file.name, type: file.type, size: bytes.byteLength };
  try {
    return { ...base, encoding: "utf8", content: new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes) };
  } catch {
    return { ...base, encoding: "base64", content: base64Of(bytes) };
  }
}

/** Fields and files of a multipart body (already within the size limit), repeated names as lists. */
async function multipartBody(bytes: Uint8Array, type: string): Promise<HostValue> {
  let form: FormData;
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": type } }).formData();
  } catch (err) {
    throw new RequestBodyError("INVALID_FORM", `the multipart body does not parse: ${(err as Error).message}`);
  }
  const pairs: [string, string | FormFile][] = [];
  for (const [name, value] of form) pairs.push([name, typeof value === "string" ? value : await formFile(value)]);
  return multiMap(pairs) as unknown as HostValue;
}

/**
 * Reads the body (at most `maxBytes`, counted as it streams) and parses it by content type: JSON
 * (at most MAX_JSON_DEPTH levels deep, checked before parsing), URL-encoded and multipart forms;
 * anything else is a string.
 */
export async function readBody(
  request: Request,
  maxBytes: number,
  received?: AsyncIterable<Uint8Array>,
): Promise<{ body: HostValue; rawBody: string; bytes?: Uint8Array }> {
  // The method first: on @hono/node-server, touching `body` builds a full Request (costly), which
  // the body as received (ServeEnv.body) avoids.
  if (request.method === "GET" || request.method === "HEAD" || (!received && request.body === null)) return { body: null, rawBody: "" };
  const bytes = await readBodyBytes(request, maxBytes, received);
  const type = request.headers.get("content-type") ?? "";
  const rawBody = UTF8.decode(bytes);
  if (rawBody === "") return { body: null, rawBody, bytes };
  if (MULTIPART_TYPE.test(type)) return { body: await multipartBody(bytes, type), rawBody, bytes };
  if (JSON_TYPE.test(type)) {
    try {
      return { body: parseJsonBounded(rawBody) as HostValue, rawBody, bytes };
    } catch (err) {
      if (err instanceof JsonDepthError) throw new RequestBodyError("JSON_TOO_DEEP", `the request body is JSON nested deeper than ${err.maxDepth} levels`);
      throw new RequestBodyError("INVALID_JSON", `the request body is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (FORM_TYPE.test(type)) return { body: multiMap(new URLSearchParams(rawBody)), rawBody, bytes };
  return { body: rawBody, rawBody, bytes };
}

interface RequestFacts {
  params: Record<string, string>;
  session: HostSession | null;
  ip: string;
  body: HostValue;
  rawBody: string;
  cookies: Record<string, string>;
  /** The header lines as received, when the runtime gives them (ServeEnv.rawHeaders). */
  rawHeaders?: readonly string[];
}

export function scriptRequest(request: Request, url: URL, facts: RequestFacts): ScriptRequest {
  return {
    method: request.method,
    url: request.url,
    path: url.pathname,
    query: multiMap(url.searchParams),
    params: facts.params,
    headers: facts.rawHeaders ? headerMapOfLines(facts.rawHeaders) : headerMap(request.headers),
    cookies: facts.cookies,
    session: facts.session,
    ip: facts.ip,
    body: facts.body,
    rawBody: facts.rawBody,
  };
}
