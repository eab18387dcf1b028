/**
 * Who the client is and whether it used https, when a proxy stands in front. The headers a proxy
 * writes (`CF-Connecting-IP`, `X-Forwarded-For`, `X-Forwarded-Proto`) are headers any client can
 * send too, so they count only when a setting says which proxy to believe:
 *
 * - `none` (the default on Node and Deno): the socket's peer is the client; no header counts.
 * - `cloudflare` (the default on workerd, where the platform sets `CF-Connecting-IP` and a client
 *   cannot): the client is `CF-Connecting-IP`, https is the request URL's scheme.
 * - a list of proxy addresses: when the socket's peer is one of them, the client is the rightmost
 *   `X-Forwarded-For` hop that is not one of them, and `X-Forwarded-Proto: https` (its first
 *   value: the one the outermost proxy saw) means https.
 */
import { CodedError } from "#lib/errors";
import type { ServeEnv } from "#lib/runtime";

export type TrustedProxy = { kind: "none" } | { kind: "cloudflare" } | { kind: "addresses"; addresses: ReadonlySet<string> };

export class TrustedProxyError extends CodedError<"INVALID_TRUSTED_PROXY"> {}

/** Addresses as the runtimes write them (IPv4-mapped IPv6 as IPv4, no brackets, lower case). */
const canonical = (address: string) => address.trim().toLowerCase().replace(/^\[|\]$/g, "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");

/** An `X-Forwarded-For` hop as an address: some proxies add the client's port (`203.0.113.7:5123`,
 * `[2001:db8::1]:5123`), and a client's every connection would otherwise be another client. */
const hopAddress = (hop: string) => canonical(hop.trim().replace(/^(\[[^\]]*\]):\d+$|^(\d+\.\d+\.\d+\.\d+):\d+$/, "$1$2"));

/** An IPv4 or IPv6 address as written (no name: a proxy is known by the address it connects from). */
function isAddress(text: string): boolean {
  if (!/^[0-9a-f:.]+$/.test(text)) return false;
  try {
    new URL(`http://${text.includes(":") ? `[${text}]` : text}`);
    return true;
  } catch {
    return false;
  }
}

/** `none`, `cloudflare` or comma-separated addresses (IPv4 or IPv6) of the proxies. */
export function parseTrustedProxy(value: string | undefined, fallback: "none" | "cloudflare" = "none"): TrustedProxy {
  const text = (value ?? "").trim();
  if (text === "") return { kind: fallback };
  if (text === "none" || text === "cloudflare") return { kind: text };
  const addresses = text.split(",").map(canonical).filter((a) => a !== "");
  const bad = addresses.find((a) => !isAddress(a));
  if (bad !== undefined || addresses.length === 0) {
    throw new TrustedProxyError("INVALID_TRUSTED_PROXY", `trusted proxy: expected none, cloudflare or proxy IP addresses, got "${bad ?? text}"`);
  }
  return { kind: "addresses", addresses: new Set(addresses) };
}

export interface ClientView {
  /** The client's address, as far as the setting lets us know it. */
  address: string | undefined;
  /** Whether the client's connection was https (to us, or to the trusted proxy). */
  https: boolean;
}

/** The client as the trusted proxy setting lets us see it; `peer` is the socket's peer address. */
export function clientView(request: Request, peer: string | undefined, proxy: TrustedProxy): ClientView {
  const https = request.url.startsWith("https:");
  if (proxy.kind === "cloudflare") return { address: request.headers.get("cf-connecting-ip") ?? peer, https };
  if (proxy.kind === "none" || peer === undefined || !proxy.addresses.has(canonical(peer))) return { address: peer, https };
  const hops = (request.headers.get("x-forwarded-for") ?? "").split(",").map(hopAddress).filter((h) => h !== "");
  let address = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    address = hops[i]!;
    if (!proxy.addresses.has(address)) break;
  }
  const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return { address, https: https || proto === "https" };
}

/**
 * The request and env a host behind `proxy` hands on: `clientAddress` as the proxy says, and the
 * URL's scheme https when the proxy says the client used it (so redirect URIs and cookies are
 * made for the origin the browser sees). Without a proxy setting, both as they came.
 */
export function throughProxy(request: Request, env: ServeEnv, proxy: TrustedProxy): { request: Request; env: ServeEnv } {
  if (proxy.kind === "none") return { request, env };
  const view = clientView(request, env.clientAddress, proxy);
  const viewed = { ...env, clientAddress: view.address };
  if (!view.https || request.url.startsWith("https:")) return { request, env: viewed };
  // The body as a stream of the new request: the one the runtime received (env.body) goes with the old.
  const reads = request.method !== "GET" && request.method !== "HEAD";
  const init = { method: request.method, headers: request.headers, body: reads ? request.body : null, redirect: request.redirect, duplex: "half" };
  return { request: new Request(`https${request.url.slice(4)}`, init as RequestInit), env: { ...viewed, body: undefined } };
}
