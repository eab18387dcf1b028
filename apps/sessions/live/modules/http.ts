/**
 * The `http` module: `fetch(url, {method, headers, body})` resolving to a copied
 * `{status, statusText, url, headers, body}` (body as text). Only http(s) URLs whose host an
 * enabled `net` capability lists are reachable:
 *   `example.com`        that host, any port
 *   `example.com:8080`   that host and port
 *   `*.example.com`      any subdomain (not the apex), optionally `:port`
 * Redirects are followed (at most `maxRedirects`) only to the same host and port; a redirect
 * elsewhere is returned as the 3xx response. The body is cut off at `maxResponseBytes`
 * (error code ERESPONSE_TOO_LARGE), and each call is aborted after `timeoutMs`.
 */
import { CodedError } from "#lib/errors";
import type { HostValue, NativeModule } from "#lib/sandbox";

export interface NetRule {
  host: string;
  wildcard: boolean;
  port?: string;
}

export interface HttpModuleOptions {
  rules: NetRule[];
  fetch: typeof fetch;
  timeoutMs: number;
  maxResponseBytes: number;
  maxRedirects: number;
}

const RULE = /^(\*\.)?(\[[0-9a-fA-F:.]+\]|[^:/\s[\]*]+)(?::(\d{1,5}))?$/;

/** Parses a `net` capability name; undefined when it is not a host pattern. */
export function parseNetRule(name: string): NetRule | undefined {
  const m = RULE.exec(name.trim());
  if (!m) return undefined;
  return { wildcard: m[1] !== undefined, host: m[2]!.toLowerCase(), port: m[3] };
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

export function hostAllowed(url: URL, rules: NetRule[]): boolean {
  const host = url.hostname.toLowerCase();
  const port = url.port || DEFAULT_PORTS[url.protocol] || "";
  return rules.some((r) => (r.wildcard ? host.endsWith("." + r.host) : host === r.host) && (r.port === undefined || r.port === port));
}

/** The codes of the `http` module's failures a script sees (`err.code`). */
export type HttpErrorCode = "ENETACCESS" | "ETIMEDOUT" | "EFETCH" | "ERESPONSE_TOO_LARGE";

class HttpError extends CodedError<HttpErrorCode> {}

function record(v: HostValue, what: string): Record<string, HostValue> {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v) || v instanceof Uint8Array) throw new TypeError(`${what} must be an object`);
  return v as Record<string, HostValue>;
}

async function readCapped(response: Response, max: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new HttpError("ERESPONSE_TOO_LARGE", `response body is larger than ${max} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

export function httpModule(o: HttpModuleOptions): NativeModule {
  return {
    functions: {
      async fetch(input, initValue) {
        if (typeof input !== "string") throw new TypeError("fetch: the URL must be a string");
        let url: URL;
        try {
          url = new URL(input);
        } catch {
          throw new TypeError(`fetch: invalid URL '${input}'`);
        }
        if (!DEFAULT_PORTS[url.protocol]) throw new TypeError(`fetch: unsupported protocol ${url.protocol}`);
        if (!hostAllowed(url, o.rules)) {
          throw new HttpError(
            "ENETACCESS",
            `fetch: no net capability allows ${url.host}: give the template a net capability naming it ` +
              `(POST /api/v1/templates/<template id>/capabilities {"kind": "net", "name": "${url.host}"}), then start a new session`,
          );
        }
        const init = record(initValue, "fetch options");
        let method = typeof init.method === "string" ? init.method.toUpperCase() : "GET";
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(record(init.headers, "headers"))) headers[k] = String(v);
        let body: string | Uint8Array<ArrayBuffer> | undefined;
        if (typeof init.body === "string") body = init.body;
        else if (init.body instanceof Uint8Array) body = new Uint8Array(init.body);
        else if (init.body !== undefined && init.body !== null) throw new TypeError("fetch: body must be a string or a Uint8Array");
        // Also stopped when the execution no longer waits for it (it ended, or was cancelled).
        const signal = AbortSignal.any([AbortSignal.timeout(o.timeoutMs), this.signal]);
        try {
          for (let redirects = 0;; redirects++) {
            const response = await o.fetch(url, { method, headers, body, redirect: "manual", signal });
            const location = response.headers.get("location");
            const next = response.status >= 300 && response.status < 400 && location ? new URL(location, url) : undefined;
            if (next && next.protocol === url.protocol && next.host === url.host && redirects < o.maxRedirects) {
              await response.body?.cancel();
              if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
                method = "GET";
                body = undefined;
              }
              url = next;
              continue;
            }
            const text = await readCapped(response, o.maxResponseBytes);
            const responseHeaders: Record<string, string> = {};
            response.headers.forEach((value, key) => (responseHeaders[key] = value));
            return { status: response.status, statusText: response.statusText, url: url.href, headers: responseHeaders, body: text };
          }
        } catch (err) {
          if (err instanceof HttpError || err instanceof TypeError) throw err;
          if ((err as Error).name === "TimeoutError") throw new HttpError("ETIMEDOUT", `fetch: no response within ${o.timeoutMs} ms`);
          throw new HttpError("EFETCH", `fetch: ${(err as Error).message ?? String(err)}`);
        }
      },
    },
  };
}
