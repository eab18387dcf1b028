/**
 * Route plans: what a planned route declares (public, or authenticated with resources, CSRF,
 * action and audit), checked once when the route is registered (never per request). The same
 * checks apply to a plan from a script (`httpmod`) and to one the host registers itself.
 */
import { getPath } from "hono/utils/url";
import * as v from "valibot";
import { CodedError } from "#lib/errors";

export interface ResourceSpec {
  /** The resource type name; also its key in `ctx.resources`. */
  type: string;
  /** The path parameter holding the resource id. */
  idParam?: string;
  /** The path parameter holding the tenant id. */
  tenantParam?: string;
  /** A missing resource is 404 (otherwise the handler sees null). */
  mustExist: boolean;
}

/** What a rate limit counts by: the client's address (before authentication), or what
 * authentication established (after it). */
export type RateLimitKey = "ip" | "actor" | "token" | "session";
const RATE_LIMIT_KEYS: readonly RateLimitKey[] = ["ip", "actor", "token", "session"];

/** `.rateLimit({limit, windowSeconds, key})`: at most `limit` requests a window per key. */
export interface RateLimitSpec {
  limit: number;
  windowSeconds: number;
  key: RateLimitKey;
  /** Counters shared by every route naming the same bucket (the host's sign-in routes); the
   * route's own name otherwise. Also the policy's name in `RateLimit-Policy`. */
  bucket?: string;
}

/** The largest limit and window a plan may declare (a day: longer windows are quotas, not rates). */
export const MAX_RATE_LIMIT = 1_000_000_000;
export const MAX_RATE_WINDOW_SECONDS = 86_400;

export interface RoutePlan {
  /** Upper case; `ALL` matches every method. */
  method: string;
  pattern: string;
  /** `ctx.routeName`: `METHOD pattern` unless given. */
  name: string;
  /** Reachable without an actor (`.public()`). */
  public: boolean;
  /** Present on authenticated routes; `required: false` lets a null actor through to authorization. */
  auth?: { required: boolean };
  resources: ResourceSpec[];
  csrf: boolean;
  /** The action handed to the Authorizer (`.allow`). */
  action?: string;
  /** The audit event name (`.audit`). */
  audit?: string;
  /** `.rateLimit(...)`, in declared order (absent: none). */
  rateLimits?: RateLimitSpec[];
}

/** A route pattern, parsed: the Hono router takes `path`; `params` are the names it captures. */
export interface RoutePattern {
  path: string;
  params: string[];
}

export type RoutePlanErrorCode = "INVALID_ROUTE_PLAN";

export class RoutePlanError extends CodedError<RoutePlanErrorCode> {
  constructor(message: string) {
    super("INVALID_ROUTE_PLAN", message);
  }
}

const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)$/;
/** Literal segments: URL path characters other than the pattern syntax (`:` only inside). */
const LITERAL = /^[A-Za-z0-9\-._~!$&'()+,;=@%][A-Za-z0-9\-._~!$&'()+,;=@%:]*$/;
const METHOD = /^[A-Z][A-Z0-9_-]{0,31}$/;

/** Exact segments, `:name` (one segment) and `*` (the rest; last segment only). */
export function parsePattern(pattern: string): RoutePattern {
  if (typeof pattern !== "string" || !pattern.startsWith("/")) throw new RoutePlanError(`route pattern ${JSON.stringify(pattern)} must start with "/"`);
  const segments = pattern.split("/").slice(1);
  if (segments.length > 1 && segments.at(-1) === "") segments.pop(); // trailing slashes are ignored
  const params: string[] = [];
  segments.forEach((segment, i) => {
    if (segment === "*") {
      if (i !== segments.length - 1) throw new RoutePlanError(`route pattern ${pattern}: "*" may only be the last segment`);
      return;
    }
    const param = PARAM.exec(segment);
    if (param) {
      if (params.includes(param[1]!)) throw new RoutePlanError(`route pattern ${pattern}: parameter :${param[1]} appears twice`);
      params.push(param[1]!);
      return;
    }
    if (segment === "" && segments.length === 1) return; // "/"
    if (!LITERAL.test(segment)) throw new RoutePlanError(`route pattern ${pattern}: segment ${JSON.stringify(segment)} is not a path segment, :name or *`);
  });
  return { path: "/" + segments.join("/"), params };
}

const Name = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const wholeNumber = (what: string, max: number) =>
  v.pipe(
    v.number(`${what} must be a whole number from 1 to ${max}`),
    v.check((n: number) => Number.isInteger(n) && n >= 1 && n <= max, `${what} must be a whole number from 1 to ${max}`),
  );
const RateLimitInput = v.strictObject({
  limit: wholeNumber("limit", MAX_RATE_LIMIT),
  windowSeconds: wholeNumber("windowSeconds", MAX_RATE_WINDOW_SECONDS),
  key: v.picklist(RATE_LIMIT_KEYS, `key must be one of ${RATE_LIMIT_KEYS.map((k) => `"${k}"`).join(", ")}`),
  bucket: v.optional(v.pipe(Name, v.regex(/^[A-Za-z0-9._:-]+$/, "bucket may hold only letters, digits, . _ : -"))),
});
const PlanInput = v.strictObject({
  method: v.pipe(v.string(), v.transform((m) => m.toUpperCase()), v.regex(METHOD, "method must be a token such as GET")),
  pattern: v.string(),
  name: v.optional(Name),
  public: v.boolean(),
  auth: v.optional(v.strictObject({ required: v.boolean() })),
  resources: v.optional(
    v.array(
      v.strictObject({
        type: Name,
        idParam: v.optional(Name),
        tenantParam: v.optional(Name),
        mustExist: v.optional(v.boolean(), false),
      }),
    ),
    [],
  ),
  csrf: v.optional(v.boolean(), false),
  action: v.optional(Name),
  audit: v.optional(Name),
  rateLimits: v.optional(v.pipe(v.array(RateLimitInput), v.maxLength(8, "a route declares at most 8 rate limits"))),
});

export type RoutePlanInput = v.InferInput<typeof PlanInput>;

/** Validates a plan: the shape, the pattern, the chain rules and the parameters it names. */
export function compileRoutePlan(input: unknown): RoutePlan & { parsed: RoutePattern } {
  const checked = v.safeParse(PlanInput, input);
  if (!checked.success) {
    const issue = checked.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join(".");
    throw new RoutePlanError(`invalid route plan${path ? ` (${path})` : ""}: ${issue.message}`);
  }
  const p = checked.output;
  const parsed = parsePattern(p.pattern);
  const where = `${p.method} ${p.pattern}`;
  if (p.public && (p.auth || p.resources.length > 0 || p.csrf || p.action !== undefined)) {
    throw new RoutePlanError(`${where}: a public route declares no authentication, resources, CSRF or action`);
  }
  if (!p.public) {
    if (!p.auth) throw new RoutePlanError(`${where}: a route is either .public() or .auth(httpmod.user()...)`);
    if (p.action === undefined) throw new RoutePlanError(`${where}: an authenticated route needs .allow(action)`);
  }
  for (const limit of p.rateLimits ?? []) {
    if (p.public && limit.key !== "ip") {
      throw new RoutePlanError(`${where}: a public route has no actor, token or session to count: its .rateLimit key must be "ip", not "${limit.key}"`);
    }
  }
  const types = new Set<string>();
  for (const r of p.resources) {
    if (types.has(r.type)) throw new RoutePlanError(`${where}: resource ${JSON.stringify(r.type)} is declared twice`);
    types.add(r.type);
    for (const param of [r.idParam, r.tenantParam]) {
      if (param !== undefined && !parsed.params.includes(param)) {
        throw new RoutePlanError(`${where}: resource ${JSON.stringify(r.type)} reads the path parameter :${param}, which the pattern does not have`);
      }
    }
  }
  const plan: RoutePlan & { parsed: RoutePattern } = {
    method: p.method,
    pattern: p.pattern,
    name: p.name ?? where,
    public: p.public,
    resources: p.resources.map((r) => ({ type: r.type, idParam: r.idParam, tenantParam: r.tenantParam, mustExist: r.mustExist })),
    csrf: p.csrf,
    parsed,
  };
  if (p.auth) plan.auth = p.auth;
  if (p.action !== undefined) plan.action = p.action;
  if (p.audit !== undefined) plan.audit = p.audit;
  if (p.rateLimits && p.rateLimits.length > 0) plan.rateLimits = p.rateLimits.map((r) => ({ ...r }));
  return plan;
}

/** Mount prefixes: "/" or "/a/b" (no trailing slash, no pattern syntax), percent-escapes decoded
 * as in `routingPath`, so they compare with it. */
export function normalizePrefix(prefix: unknown, what = "mount prefix"): string {
  if (typeof prefix !== "string" || !prefix.startsWith("/")) throw new RoutePlanError(`${what} ${JSON.stringify(prefix)} must start with "/"`);
  const trimmed = prefix.replace(/\/+$/, "");
  if (trimmed === "") return "/";
  for (const segment of trimmed.split("/").slice(1)) {
    if (!LITERAL.test(segment) || segment === "." || segment === "..") {
      throw new RoutePlanError(`${what} ${prefix}: segment ${JSON.stringify(segment)} is not a plain path segment`);
    }
  }
  return routingPath(trimmed);
}

/**
 * The path a request is matched on: decoded the way Hono decodes it before routing (every
 * percent-escape but reserved characters and `%25`), so `/idp/%64ebug` is `/idp/debug`, with runs
 * of slashes folded. The mounted services are Hono apps: the host decides on the path they will
 * route, and a prefix or exclusion cannot be stepped around by encoding it. Takes a URL or a
 * path.
 */
export function routingPath(urlOrPath: string): string {
  const url = urlOrPath.startsWith("/") ? `http://host${urlOrPath}` : urlOrPath;
  return getPath({ url } as Request).replace(/\/{2,}/g, "/");
}

/** Whether `path` is `prefix` or below it, on segment boundaries (`/static` is not `/staticfoo`). */
export function underPrefix(path: string, prefix: string): boolean {
  if (prefix === "/") return true;
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47 /* / */);
}

/**
 * The part of the raw (still encoded) `path` below a mount `prefix` that its routing path
 * matched: the prefix's segments are skipped by count, since decoding never adds or removes a
 * `/` (`%2F` stays encoded) and empty segments were folded for matching. "" when nothing is left.
 */
export function rawBelow(path: string, prefix: string): string {
  if (prefix === "/") return path;
  const segments = path.split("/");
  let count = prefix.split("/").length - 1;
  let i = 1;
  for (; count > 0 && i < segments.length; i++) if (segments[i] !== "") count--;
  return i >= segments.length ? "" : `/${segments.slice(i).join("/")}`;
}
