/**
 * Redirect URI patterns for preview environments (opt-in, per client): `https://*.preview.example.com/callback`
 * accepts `https://pr-42.preview.example.com/callback` and nothing else of that shape.
 *
 * The rules keep a pattern from reaching further than one team's own preview hosts:
 * - https only, no user info, no fragment, written as the URL parser writes it (canonical form);
 * - exactly one `*`, which is the whole leftmost DNS label of the host;
 * - it stands for exactly one label (letters, digits, hyphens; no dot, never empty), lower case;
 * - the fixed part after it has at least two labels and is not a shared hosting suffix or a
 *   two-level public suffix (`*.vercel.app` or `*.co.uk` would hand codes to anyone who can
 *   deploy there); the list is short, not the Public Suffix List: docs/idp.md says so;
 * - port, path and query are matched exactly, as the rest of the string.
 */
import { CodedError } from "#lib/errors";

export type RedirectPatternErrorCode = "INVALID_REDIRECT_PATTERN";

export class RedirectPatternError extends CodedError<RedirectPatternErrorCode> {
  constructor(readonly pattern: string, reason: string) {
    super("INVALID_REDIRECT_PATTERN", `redirect URI pattern "${pattern}": ${reason}`);
  }
}

const PREFIX = "https://*.";
/** One DNS label in the form a URL parser leaves it (lower case). */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Suffixes under which anyone may get a host name (shared hosting, tunnels) or that are public
 * suffixes of two labels: a wildcard directly under one of them is refused.
 */
const SHARED_SUFFIXES: ReadonlySet<string> = new Set([
  "vercel.app",
  "now.sh",
  "netlify.app",
  "netlify.com",
  "pages.dev",
  "workers.dev",
  "github.io",
  "gitlab.io",
  "herokuapp.com",
  "onrender.com",
  "fly.dev",
  "railway.app",
  "azurewebsites.net",
  "azurestaticapps.net",
  "cloudfront.net",
  "amplifyapp.com",
  "web.app",
  "firebaseapp.com",
  "appspot.com",
  "run.app",
  "deno.dev",
  "deno.net",
  "ngrok.io",
  "ngrok-free.app",
  "ngrok.app",
  "trycloudflare.com",
  "loca.lt",
  "lhr.life",
  "serveo.net",
  "ngrok.dev",
  "ngrok-free.dev",
  "app.github.dev",
  "up.railway.app",
  "a.run.app",
  "r2.dev",
  "csb.app",
  "replit.dev",
  "repl.co",
  "glitch.me",
  "surge.sh",
  "s3.amazonaws.com",
  "blob.core.windows.net",
  "web.core.windows.net",
  // Wildcard DNS: a label names any IP address (`1-2-3-4.nip.io`), so anyone's server.
  "nip.io",
  "sslip.io",
  "co.uk",
  "org.uk",
  "ac.uk",
  "com.au",
  "net.au",
  "org.au",
  "co.nz",
  "co.jp",
  "com.br",
  "com.cn",
  "co.in",
  "co.za",
  "com.mx",
  "com.tr",
]);

export interface RedirectPattern {
  pattern: string;
  /** What follows the wildcard label: `.preview.example.com/callback`. */
  rest: string;
}

/** Is this entry meant as a pattern (it has a `*`) rather than an exact redirect URI? */
export const isRedirectPattern = (value: string) => value.includes("*");

/** Checks a pattern against the rules above: the parsed pattern, or RedirectPatternError. */
export function parseRedirectPattern(pattern: string): RedirectPattern {
  const fail = (reason: string) => new RedirectPatternError(pattern, reason);
  if (!pattern.startsWith(PREFIX)) throw fail("must start with https://*. (https only; the wildcard is the whole leftmost label of the host)");
  if (pattern.indexOf("*") !== pattern.lastIndexOf("*")) throw fail("must have exactly one *");
  const sample = pattern.replace("*", "x");
  let url: URL;
  try {
    url = new URL(sample);
  } catch {
    throw fail("is not an absolute URL");
  }
  if (url.username || url.password) throw fail("must not have user info");
  if (url.hash || sample.includes("#")) throw fail("must not have a fragment");
  if (url.href !== sample) throw fail(`must be written in canonical form (${url.href.replace("//x.", "//*.")})`);
  const fixed = url.hostname.slice(2);
  const labels = fixed.split(".");
  if (labels.length < 2 || labels.some((l) => l === "")) throw fail("needs at least two labels after the wildcard (not *.com)");
  if (/^\d+$/.test(labels.at(-1)!)) throw fail("must name a DNS host, not an IP address");
  if (SHARED_SUFFIXES.has(fixed)) throw fail(`*.${fixed} would match hosts anyone can create there; put the wildcard under a domain of your own`);
  return { pattern, rest: pattern.slice(PREFIX.length - 1) };
}

/** Does `uri` match the pattern, its wildcard standing for exactly one DNS label? */
export function matchesRedirectPattern(p: RedirectPattern, uri: string): boolean {
  if (!uri.startsWith("https://") || !uri.endsWith(p.rest)) return false;
  const label = uri.slice("https://".length, uri.length - p.rest.length);
  return LABEL.test(label);
}

/** The pattern of the origins a pattern's URIs have (`https://*.preview.example.com`), for CORS. */
export function originPattern(p: RedirectPattern): RedirectPattern {
  const origin = new URL(p.pattern.replace("*", "x")).origin;
  return { pattern: origin.replace("//x.", "//*."), rest: origin.slice("https://x".length) };
}
