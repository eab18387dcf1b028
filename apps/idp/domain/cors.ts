/**
 * Which web origins may read the provider's answers from a page (CORS): the origins of every
 * registered redirect URI (a loopback IP literal's on any port, as the redirect URI itself:
 * RFC 8252 §7.3) and of redirect URI patterns, plus the configured `cors-origins`, where `*`
 * allows every origin. Clients registered at /register: routes/cors.ts.
 */
import { type Client, loopbackKey, originsOf } from "./clients.ts";
import { matchesRedirectPattern, originPattern, type RedirectPattern } from "./redirect-patterns.ts";

/** `*`, or an origin as a browser sends it: `scheme://host[:port]` (one trailing `/` is dropped). */
export function parseCorsOrigin(value: string): string | undefined {
  const text = value.trim();
  if (text === "*") return text;
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+)\/?$/i.exec(text);
  return m ? m[1]!.toLowerCase() : undefined;
}

export const CORS_ORIGIN_HINT = "expected * or an origin such as http://localhost:4000 (scheme, host and port; no path)";

export class CorsPolicy {
  private readonly any: boolean;
  private readonly exact = new Set<string>();
  /** `scheme://127.0.0.1` or `scheme://[::1]` of loopback redirect URIs: every port. */
  private readonly loopback = new Set<string>();
  /** The origins of redirect URI patterns (one wildcard label). */
  private readonly patterns: RedirectPattern[] = [];

  constructor(clients: Iterable<Client>, configured: readonly string[] = []) {
    const origins = configured.map((o) => parseCorsOrigin(o) ?? o);
    this.any = origins.includes("*");
    for (const origin of origins) this.exact.add(origin);
    for (const client of clients) {
      for (const origin of originsOf(client.redirect_uris)) {
        const key = loopbackKey(origin);
        if (key !== undefined) this.loopback.add(key);
        else this.exact.add(origin);
      }
      for (const pattern of client.redirect_uri_patterns ?? []) this.patterns.push(originPattern(pattern));
    }
  }

  /** May a page of `origin` (the `Origin` request header) read the answers? */
  allows(origin: string): boolean {
    if (this.any || this.exact.has(origin)) return true;
    const key = loopbackKey(origin);
    if (key !== undefined && this.loopback.has(key)) return true;
    return this.patterns.some((p) => matchesRedirectPattern(p, origin));
  }
}
