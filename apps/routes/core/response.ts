/**
 * From what a handler produced to a web Response: the result rules (docs/routes.md, "Result rules") were applied in
 * the sandbox (httpmod-source.ts); here the host checks what it is about to put on the wire.
 * A status outside 200-599, a header name or value that could split or break the response (a
 * control character or a character past U+00FF in a value, a name that is not an HTTP token), a header that frames the message, or X-Request-Id is refused: the
 * request becomes a 500, and the bad header never reaches the wire. The host owns framing
 * (RFC 9112 §6): a script's `content-length` or `transfer-encoding` beside the body the host
 * sends would desynchronise a keep-alive connection.
 */
import { CodedError } from "#lib/errors";
import type { HostValue } from "#lib/sandbox";
import type { ScriptResponse } from "../script/script-sandbox.ts";

/** Renders `res.html(value)` for a non-string value (spec: the host's Renderer option). */
export type Renderer = (value: HostValue) => string | Promise<string>;

export type ResponseRuleErrorCode = "INVALID_RESPONSE";

export class ResponseRuleError extends CodedError<ResponseRuleErrorCode> {
  constructor(message: string) {
    super("INVALID_RESPONSE", message);
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A field value is visible ASCII, space, tab and obs-text (RFC 9110 §5.5): any other control
 * character (CR, LF and NUL split responses; the rest make runtimes throw mid-response), or a
 * character past U+00FF (not a byte), is refused. */
const UNSAFE_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const NO_BODY = new Set([101, 204, 205, 304]);
const NOSNIFF = ["x-content-type-options", "nosniff"] as const;
/** Headers only the host may set: message framing and hop-by-hop fields (RFC 9110 §7.6.1). */
const FRAMING = new Set(["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer"]);

function isFramingHeader(name: string): boolean {
  const key = name.toLowerCase();
  return FRAMING.has(key) || key.startsWith("proxy-");
}

function checkHeader(name: string, value: string): void {
  if (!TOKEN.test(name)) throw new ResponseRuleError(`header name ${JSON.stringify(name)} is not an HTTP token`);
  if (isFramingHeader(name)) throw new ResponseRuleError(`header ${name} frames the message: only the host sets it`);
  // The id the access log and the audit record name the request by (lib/http/request-id.ts): a
  // script's own would send a caller to another request's lines.
  if (name.toLowerCase() === "x-request-id") throw new ResponseRuleError(`header ${name} is the host's: it carries the request's id`);
  if (UNSAFE_VALUE.test(value)) {
    throw new ResponseRuleError(`header ${name} has a control character (CR, LF, NUL, ...) or a character past U+00FF in its value`);
  }
}

export async function toWebResponse(r: ScriptResponse, method: string, renderer: Renderer | undefined): Promise<Response> {
  if (!Number.isInteger(r.status) || r.status < 200 || r.status > 599) throw new ResponseRuleError(`status ${r.status} is not an HTTP status from 200 to 599`);
  // A plain record where it can be (no repeated name): @hono/node-server writes that out as it is,
  // where a Headers object costs it a copy (bench/routes.bench.ts).
  let headers: Record<string, string> | Headers = {};
  for (const [name, value] of r.headers) {
    checkHeader(name, value);
    const key = name.toLowerCase();
    if (headers instanceof Headers) headers.append(key, value);
    else if (key in headers) headers = new Headers([...Object.entries(headers), [key, value]]);
    else headers[key] = value;
  }
  // The type the script chose is the one a browser uses: a text answer echoing a query is not a
  // script or a style sheet another page may load (a script that sets this header keeps its own).
  if (headers instanceof Headers) {
    if (!headers.has(NOSNIFF[0])) headers.set(...NOSNIFF);
  } else if (!(NOSNIFF[0] in headers)) headers[NOSNIFF[0]] = NOSNIFF[1];
  let body: BodyInit | null = (r.bytes as Uint8Array<ArrayBuffer> | undefined) ?? r.body;
  if (r.render) {
    if (!renderer) throw new ResponseRuleError("res.html(value) with a non-string value needs the host's renderer, and none is configured");
    body = await renderer(r.render.value);
  }
  // An empty string would make the Response add a text/plain content type of its own.
  if (method === "HEAD" || NO_BODY.has(r.status) || body === "") body = null;
  return new Response(body, { status: r.status, headers });
}
