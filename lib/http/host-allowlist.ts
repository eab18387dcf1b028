/**
 * DNS rebinding: a page on `rebind.attacker.example` whose name the attacker re-points at
 * 127.0.0.1 talks to a local daemon as its own origin, so the browser's same-origin rule protects
 * nothing. The one thing such a request cannot hide is the name the browser put in `Host`. So
 * every service answers only the host names it knows: loopback literals, `localhost` and its
 * subdomains (RFC 6761: they never leave the machine), the hosts of its configured issuer or
 * origin, and what `--allowed-hosts` adds; anything else is 421 Misdirected Request.
 *
 * The Host value is read as a browser writes it: through the WHATWG URL parser, so `LOCALHOST`,
 * `127.1`, `2130706433`, `0x7f000001` and `[0:0:0:0:0:0:0:1]` are the loopback they stand for,
 * and one trailing dot is dropped (`localhost.` is `localhost`; the configured names match with
 * or without it). A value the parser would read as more than an authority (userinfo, a path), an
 * empty one, two Host headers (joined with ", " by the runtimes that pass both on) and an
 * absolute-form request target naming another authority than Host are refused.
 *
 * This wraps the app's `fetch`, like `withRequestId` and for the same reason: a Hono middleware
 * would make every dispatch asynchronous. Allowed values are remembered (a bounded Map), so a
 * request pays one Map lookup and one string comparison.
 */
import type { ServeEnv } from "#lib/runtime";
import { html } from "hono/html";
import { CodedError } from "#lib/errors";
import { errorEnvelope } from "./errors.ts";
import { FRAME_DENY } from "./frame-deny.ts";
import { type FetchingApp, REQUEST_ID_HEADER, requestIdOf } from "./request-id.ts";

/** The hosts a service answers: `any` when the check is off (`*`). */
export interface HostAllowlist {
  readonly any: boolean;
  /** Exact host names (normalized, no port, no trailing dot; IPv6 in brackets). */
  readonly names: ReadonlySet<string>;
  /** `.example.test` entries: that domain and every name under it. */
  readonly suffixes: readonly string[];
}

/** An `--allowed-hosts` entry that is not a host name. */
export class AllowedHostsError extends CodedError<"INVALID_ALLOWED_HOST"> {}

/** Characters that make `http://<value>` more than an authority (userinfo, path, query,
 * fragment), white space, and the comma two joined Host headers leave. */
const NOT_AUTHORITY = /[@/\\?#\s,]/;

/**
 * The host name (no port) a Host value or allowlist entry names, as a browser reads it; undefined
 * when it is not one authority.
 */
export function hostNameOf(value: string): string | undefined {
  if (value === "" || NOT_AUTHORITY.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${value}`);
  } catch {
    return undefined;
  }
  if (url.hostname === "") return undefined;
  return url.hostname.endsWith(".") ? url.hostname.slice(0, -1) : url.hostname;
}

const isLoopbackName = (name: string) => name === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(name);
const isLocalhost = (name: string) => name === "localhost" || name.endsWith(".localhost");

/** Whether `hostname` (as `hostNameOf` gives it) is one the list allows. Pure. */
export function allowsHostName(list: HostAllowlist, hostname: string): boolean {
  if (list.any || list.names.has(hostname) || isLoopbackName(hostname) || isLocalhost(hostname)) return true;
  return list.suffixes.some((s) => hostname === s.slice(1) || hostname.endsWith(s));
}

/** Whether the authority (a Host header's value: name and optional port) is allowed. Pure. */
export function allowsAuthority(list: HostAllowlist, authority: string): boolean {
  const name = hostNameOf(authority);
  return name !== undefined && allowsHostName(list, name);
}

/**
 * The allowlist of a service: the defaults, the hosts of the URLs it is known by (its issuer or
 * public origin; `{origin}` placeholders and relative paths are skipped) and the configured
 * entries (`*` turns the check off; `.example.test` allows that domain and its subdomains; a port
 * is ignored). Throws AllowedHostsError for an entry that names no host.
 */
export function hostAllowlist(options: { urls?: readonly (string | undefined)[]; hosts?: readonly string[] } = {}): HostAllowlist {
  const names = new Set<string>();
  const suffixes: string[] = [];
  let any = false;
  for (const url of options.urls ?? []) {
    const name = url && /^https?:\/\/[^{]*$/i.test(url) ? hostNameOf(new URL(url).host) : undefined;
    if (name) names.add(name);
  }
  for (const entry of options.hosts ?? []) {
    const value = entry.trim();
    if (value === "*") any = true;
    else if (value.startsWith(".")) {
      const name = hostNameOf(value.slice(1));
      if (!name) throw new AllowedHostsError("INVALID_ALLOWED_HOST", `allowed hosts: "${entry}" is not a host name`);
      suffixes.push(`.${name}`);
    } else {
      const name = hostNameOf(value);
      if (!name) {
        throw new AllowedHostsError(
          "INVALID_ALLOWED_HOST",
          `allowed hosts: "${entry}" is not a host name (expected a name or address, .domain for its subdomains, or *)`,
        );
      }
      names.add(name);
    }
  }
  return { any, names, suffixes };
}

/** The listen address as a URL whose host an allowlist takes: none for a wildcard (0.0.0.0, ::),
 * which names no host a browser would use. */
export function listenUrl(address: { hostname: string; port: number }): string | undefined {
  const { hostname } = address;
  if (hostname === "" || hostname === "0.0.0.0" || hostname === "::") return undefined;
  return `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${address.port}`;
}

/** A comma-separated `--allowed-hosts` / `*_ALLOWED_HOSTS` value as entries. */
export const parseAllowedHosts = (value: string | undefined): string[] => (value ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");

const OFF_WARNING = "a web page can reach this service by DNS rebinding";

/** Logs a warning when the check is off: under JSON logs no banner is printed to say so. */
export function warnIfHostCheckOff(logger: { warn(message: string): void }, list: HostAllowlist): void {
  if (list.any) logger.warn(`the Host check is off (--allowed-hosts *): ${OFF_WARNING}`);
}

/** The banner's words for the list (and a warning when it is off). */
export function describeAllowlist(list: HostAllowlist): string {
  if (list.any) return `any (--allowed-hosts *): WARNING, ${OFF_WARNING}`;
  const named = [...list.names].filter((n) => !isLoopbackName(n) && !isLocalhost(n));
  return ["loopback", "localhost", ...named, ...list.suffixes.map((s) => `*${s}`)].join(", ");
}

/**
 * The Host header: from the raw header lines where the runtime passes them (`ServeEnv.rawHeaders`,
 * Node: reading `request.headers` there first builds a whole Headers object, which the route
 * host's hot path otherwise never pays for), else from the headers. Two Host lines come back
 * joined with ", ", as the runtimes join them, so they never parse as one host.
 */
function hostHeader(request: Request, rawHeaders: readonly string[] | undefined): string | null {
  if (!rawHeaders) return request.headers.get("host");
  let host: string | null = null;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === "host") host = host === null ? rawHeaders[i + 1]! : `${host}, ${rawHeaders[i + 1]}`;
  }
  return host;
}

/** Why the request is not for this service, or undefined when it is. */
export function misdirected(list: HostAllowlist, request: Request, seen?: Map<string, true>, rawHeaders?: readonly string[]): string | undefined {
  if (list.any) return undefined;
  const host = hostHeader(request, rawHeaders);
  // No Host at all (HTTP/1.0): the runtime named the URL after its listen address. A browser
  // always sends one, so such a request is no page's.
  if (host === null) return allowsAuthority(list, new URL(request.url).host) ? undefined : "the request names no host this service answers";
  const url = request.url;
  // The usual case: the runtime built the URL from this very Host value.
  const consistent = url.startsWith(`http://${host}/`) || url.startsWith(`https://${host}/`);
  if (consistent && seen?.has(host)) return undefined;
  const name = hostNameOf(host);
  if (name === undefined) return "the Host header is not one host name (empty, repeated, or with more than an authority)";
  if (!consistent && hostNameOf(new URL(url).host) !== name) return "the request target names another host than the Host header";
  if (!allowsHostName(list, name)) return `${name} is not a host this service answers`;
  if (consistent && seen && seen.size < MAX_REMEMBERED) seen.set(host, true);
  return undefined;
}

/** How many allowed Host values are remembered (each a Map key; a bound, not an eviction policy). */
const MAX_REMEMBERED = 256;

/** What 421 says, in the service's own JSON shape. */
export type MisdirectedBody = (message: string) => unknown;
/** The session service's and the route host's `{error:{code,message}}`. */
export const envelopeMisdirected: MisdirectedBody = (message) => errorEnvelope("MISDIRECTED_REQUEST", message);

const HINT = "Open it at localhost or 127.0.0.1, or add the name with --allowed-hosts.";

/** 421: a page for a browser, the service's JSON for a program. It answers before the request id
 * middleware, so it carries the id itself (every response has one). */
export function misdirectedResponse(request: Request, reason: string, body: MisdirectedBody, env?: ServeEnv): Response {
  const headers = { "Cache-Control": "no-store", ...FRAME_DENY, [REQUEST_ID_HEADER]: requestIdOf(request, env) };
  if ((request.headers.get("accept") ?? "").includes("text/html")) {
    const page = html`
      <!doctype html>
      <html lang="en">
        <head>
          <meta charset="utf-8">
          <title>Misdirected request</title>
        </head>
        <body>
          <h1>Misdirected request</h1>
          <p>${reason}.</p>
          <p>${HINT}</p>
        </body>
      </html>
    `;
    return new Response(String(page), { status: 421, headers: { ...headers, "Content-Type": "text/html; charset=utf-8" } });
  }
  return Response.json(body(`${reason}. ${HINT}`), { status: 421, headers });
}

/** The 421 for a request the list does not allow, or undefined (a Worker's entry asks this first). */
export function misdirectedAnswer(list: HostAllowlist, request: Request, body: MisdirectedBody): Response | undefined {
  const reason = misdirected(list, request);
  return reason === undefined ? undefined : misdirectedResponse(request, reason, body);
}

/**
 * Replaces `app.fetch` with one that answers 421 to a request for a host the list does not allow
 * (see the module comment). Put it outermost, where the runtime hands requests in.
 */
export function withAllowedHosts<A extends FetchingApp>(app: A, list: HostAllowlist, body: MisdirectedBody): A {
  if (list.any) return app;
  const inner = app.fetch;
  const seen = new Map<string, true>();
  app.fetch = (request: Request, env?: ServeEnv, executionCtx?: unknown) => {
    const reason = misdirected(list, request, seen, env?.rawHeaders);
    return reason === undefined ? inner.call(app, request, env, executionCtx) : misdirectedResponse(request, reason, body, env);
  };
  return app;
}
