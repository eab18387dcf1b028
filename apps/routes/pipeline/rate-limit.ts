/**
 * `.rateLimit({limit, windowSeconds, key})`: at most `limit` requests a fixed window per key, in
 * two places of the pipeline:
 *
 * - `ip` limits count before the body is read or anyone is authenticated (a flood costs the host
 *   no parsing and no token checks), by the client's address as the entry saw it: the socket's
 *   peer, or what the trusted-proxy setting believes (lib/http/trusted-proxy.ts), never a
 *   forwarding header a client wrote itself. An IPv6 client counts by its /64 (one subscriber's
 *   addresses are one client).
 * - `actor`, `token` and `session` limits count after authentication, by what it established: the
 *   actor, the access token it came with (its hash), the signed-in host session. A request
 *   without that credential counts by its actor, and one without an actor by its address.
 *
 * Past the limit: 429 `RATE_LIMITED` with `Retry-After` and the IETF httpapi draft's `RateLimit`
 * and `RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers-10:
 * `RateLimit-Policy: "ip-60s";q=100;w=60`, `RateLimit: "ip-60s";r=0;t=42`), audited as denied with
 * reason `rate_limited`. Answers within the limit carry the two fields too. Counters are kept per
 * route (or per `bucket`, shared by the routes naming it) under a SHA-256 of the route, the limit
 * and the client, so keys of different kinds or routes never collide and no token is kept.
 */
import { sha256Base64url } from "#lib/oauth";
import { withEditedHeaders } from "#lib/http";
import type { RateLimitSpec, RoutePlan } from "../core/plan.ts";
import { HostReply } from "../core/reply.ts";
import type { RateLimitStore } from "../store/rate-limits.ts";
import { type PipelineState, type Stage, stateOf } from "./state.ts";

/** The policy's name in the RateLimit fields: the bucket, else the key and window (`ip-60s`). */
const policyName = (spec: RateLimitSpec) => spec.bucket ?? `${spec.key}-${spec.windowSeconds}s`;

/** `RateLimit-Policy` for `specs` (a Structured Fields list: quoted name, quota, window). */
const rateLimitPolicyField = (specs: RateLimitSpec[]) => specs.map((s) => `"${policyName(s)}";q=${s.limit};w=${s.windowSeconds}`).join(", ");

/** Whether a limit counts before authentication (`ip`) or after it. */
export const countsBeforeAuthentication = (spec: RateLimitSpec) => spec.key === "ip";

/** The client of an address: an IPv6 address by its /64, an IPv4 address (IPv4-mapped IPv6 too)
 * as written, anything else as written ("" unknown). IPv6 is read by the URL parser, so every
 * spelling of one address (upper case, leading zeros, `::` anywhere, a dotted tail, brackets, a
 * zone id) is one client. */
export function addressClient(address: string): string {
  const text = address.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (!text.includes(":")) return text || "unknown";
  if (!/^[0-9a-f:.]+$/.test(text)) return text; // not an address (nothing for the URL parser to read past): as written
  let host: string;
  try {
    host = new URL(`http://[${text}]`).hostname.slice(1, -1); // compressed, lower case, hex only
  } catch {
    return text;
  }
  const [head = "", tail] = host.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  if (groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff") {
    const [high, low] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join("."); // IPv4 on a dual-stack socket
  }
  return `${groups.slice(0, 4).join(":")}::/64`;
}

/** The access token a request carried (`Authorization: Bearer|DPoP <token>`), if any. */
function accessToken(request: Request): string | undefined {
  const match = /^(?:bearer|dpop)\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  return match?.[1];
}

/** A JWT by what it signs (header and payload): the last character of its base64url signature
 * has spare bits that decoders ignore, so one token has up to 16 spellings that verify, and each
 * would get an allowance of its own. Other tokens as they are. */
function tokenIdentity(token: string): string {
  const jws = /^(eyJ[\w-]*\.[\w-]*)\.[\w-]*$/.exec(token);
  return jws ? jws[1]! : token;
}

/** What `spec` counts this request by: the kind actually used and its value. */
function clientOf(spec: RateLimitSpec, state: PipelineState, request: Request): [string, string] {
  const actor = state.actor;
  if (spec.key === "token" && actor) {
    const token = accessToken(request);
    if (token !== undefined) return ["token", tokenIdentity(token)];
  }
  // A signed-in browser: its session (a bearer request's actor did not come from the session).
  if (spec.key === "session" && actor && !state.session.isNew && accessToken(request) === undefined) return ["session", state.session.id];
  if (spec.key !== "ip" && actor) return ["actor", `${actor.kind}\u0000${actor.id}`];
  return ["ip", addressClient(state.ip)];
}

interface RateLimitDeps {
  store: RateLimitStore;
  now: () => Date;
}

interface Counted {
  spec: RateLimitSpec;
  remaining: number;
  resetSeconds: number;
}

const rateLimitField = (counted: Counted[]) => counted.map((c) => `"${policyName(c.spec)}";r=${c.remaining};t=${c.resetSeconds}`).join(", ");

/** Whether the request still has a body on the wire (refused before it is read: the connection
 * closes rather than read the rest, as a 413 does). */
function hasUnreadBody(request: Request): boolean {
  if (request.method === "GET" || request.method === "HEAD") return false;
  const length = request.headers.get("content-length");
  return request.headers.has("transfer-encoding") || (length !== null && length !== "0");
}

/** The stage counting `specs` (all before authentication, or all after it) for `plan`. */
export function rateLimitStage(plan: RoutePlan, specs: RateLimitSpec[], deps: RateLimitDeps): Stage {
  const before = specs.every(countsBeforeAuthentication);
  return async (c, next) => {
    const state = stateOf(c);
    const request = c.req.raw;
    const now = deps.now().getTime();
    const counted: Counted[] = [];
    let refused: Counted | undefined;
    for (const spec of specs) {
      const [kind, value] = clientOf(spec, state, request);
      const key = await sha256Base64url(JSON.stringify([spec.bucket ?? plan.name, spec.key, spec.limit, spec.windowSeconds, kind, value]));
      const hit = await deps.store.hit(key, spec.limit, spec.windowSeconds * 1000, now);
      const entry = { spec, remaining: Math.max(0, spec.limit - hit.count), resetSeconds: Math.max(1, Math.ceil((hit.resetAt - now) / 1000)) };
      counted.push(entry);
      if (!hit.allowed) {
        refused = entry;
        break; // the limits after it are not counted for a refused request
      }
    }
    if (refused) {
      const headers: Record<string, string> = {
        "retry-after": String(refused.resetSeconds),
        "ratelimit-policy": rateLimitPolicyField(specs),
        ratelimit: rateLimitField([refused]),
      };
      if (before && hasUnreadBody(request)) headers.connection = "close";
      throw new HostReply(
        429,
        "RATE_LIMITED",
        `too many requests: at most ${refused.spec.limit} every ${refused.spec.windowSeconds} s; try again in ${refused.resetSeconds} s`,
        headers,
        "rate_limited",
      );
    }
    await next();
    // Within the limits: the client learns where it stands (a 429 from a later stage says its own).
    if (c.res.status === 429 && c.res.headers.has("ratelimit")) return;
    // Before the fields a later stage (the limits counted after authentication) put there.
    const prepend = (h: Headers, name: string, value: string) => h.set(name, h.has(name) ? `${value}, ${h.get(name)}` : value);
    const response = withEditedHeaders(c.res, (h) => {
      prepend(h, "ratelimit-policy", rateLimitPolicyField(specs));
      prepend(h, "ratelimit", rateLimitField(counted));
    });
    if (response !== c.res) {
      c.res = undefined; // Hono's setter would merge the old response's headers into the new one
      c.res = response;
    }
  };
}
