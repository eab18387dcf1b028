/**
 * What the route host offers and takes: its options, the handlers a host registers itself, the
 * context a host-side handler gets, and the plan table's rows. Types only, so the auth modules that
 * register routes (auth/browser.ts) and the host itself depend on this, not on each other.
 */
import type { FileTree } from "#lib/files";
import type { StaticDirectory } from "#lib/http";
import type { Logger } from "#lib/log";
import type { FetchHandler, ServeEnv } from "#lib/runtime";
import type { HostValue } from "#lib/sandbox";
import type { ScriptRuntime } from "../script/runtime.ts";
import type { RateLimitStore } from "../store/rate-limits.ts";
import type { ScriptBundle, ScriptHostCalls, ScriptNatives } from "../script/script-sandbox.ts";
import type { RateLimitSpec, RoutePlanInput } from "./plan.ts";
import type { ScriptRequest } from "./request.ts";
import type { Renderer } from "./response.ts";
import type { Actor, AuthServices, ResourceRef } from "./services.ts";

export interface RouteHostOptions {
  /** Development mode: handler error messages in 500 bodies, the dev error page. */
  dev?: boolean;
  /** A matched route without a plan (`registerRaw`) is refused (production hosts that serve
   * planned routes only; the spec's RejectRawRoutes). */
  rejectRawRoutes?: boolean;
  auth?: AuthServices;
  renderer?: Renderer;
  /** Where script handlers run; made with the natives (tokens, service names) the host installs
   * and the function that runs a handler's service calls. */
  runtime?: (natives: ScriptNatives, hostCalls: ScriptHostCalls) => ScriptRuntime;
  /** Files for `app.static(prefix, directory)`: directories are relative to `staticRoot`. */
  files?: { tree: FileTree; root: string };
  /** Native modules whose functions hand a script a mountable: `require(module)[fn]()`. */
  mountables?: Record<string, Record<string, FetchHandler>>;
  /** Modules of host functions a handler may call, `require(module)[fn](...args)`, each returning
   * a promise in the sandbox (arguments and results are copied as data). */
  services?: Record<string, Record<string, HostServiceFunction>>;
  /** Read-only file trees a script can serve with `app.staticFromAssetsModule`: `require(name)`. */
  assets?: Record<string, StaticDirectory>;
  /** The host session cookie (an identifier, not a credential). */
  session?: { secret: string; cookieName?: string; secure?: boolean };
  logger?: Logger;
  /** Largest request body read, bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Where `.rateLimit` counters live (default: memory, bounded; store/rate-limits.ts). */
  rateLimits?: RateLimitStore;
  now?: () => Date;
}

/** The planned context a host-side handler gets (the script's `ctx`, plus the raw request). */
export interface HostPlannedContext {
  request: ScriptRequest;
  raw: Request;
  actor: Actor | null;
  body: HostValue;
  params: Record<string, string>;
  resources: Record<string, ResourceRef | null>;
  resource(name: string): ResourceRef | null;
  action?: string;
  routeName: string;
  csrfToken?: string;
}

/** A host function a script's handler may call; throw an Error (with a string `code`) to fail it. */
export type HostServiceFunction = (...args: HostValue[]) => HostValue | Promise<HostValue>;

export type HostHandler = (ctx: HostPlannedContext) => Response | Promise<Response>;
/** A low-level host route: no plan, so no pipeline; what the spec's RejectRawRoutes refuses. */
export type RawHandler = (request: Request, params: Record<string, string>) => Response | Promise<Response>;

/** One row of the plan table (`routes()`, `npm run routes -- routes`). */
export interface RouteInfo {
  kind: "route" | "mount" | "static";
  method?: string;
  pattern: string;
  name?: string;
  /** "public", "auth" (required), "auth?" (optional actor), or "raw" (no plan). */
  access: "public" | "auth" | "auth?" | "raw" | "mount" | "static";
  resources?: string[];
  csrf?: boolean;
  action?: string;
  audit?: string;
  /** The resources declared with `.mustExist()` (a missing one is 404). */
  mustExist?: string[];
  /** The route's `.rateLimit(...)`s (past one: 429). */
  rateLimits?: RateLimitSpec[];
  /** A mount's or SPA's excluded prefixes (they skip it, to later mounts and routes). */
  excludePrefixes?: string[];
  /** A single-page app (`app.spaFromAssetsModule`): the file answering paths that name no file. */
  spaIndex?: string;
  source: "script" | "host";
  at?: string;
}

export interface RouteHost {
  /** Loads (or reloads) a script: its registrations replace the previous script's at once; on
   * failure (ScriptLoadError, RoutePlanError) the previous script stays and the error is kept. */
  loadScript(bundle: ScriptBundle): Promise<void>;
  /** The last load's error, or undefined after a successful load. */
  readonly loadError: string | undefined;
  /** Resolves when every handler thread has the current script (see ScriptRuntime.ready). */
  ready(): Promise<void>;
  registerPlanned(plan: RoutePlanInput, handler: HostHandler): void;
  /** A route without a plan (the spec's low-level route): served as is, or refused with 403
   * RAW_ROUTES_DISABLED under `rejectRawRoutes`. */
  registerRaw(method: string, pattern: string, handler: RawHandler): void;
  routes(): RouteInfo[];
  fetch(request: Request, env?: ServeEnv): Promise<Response>;
  close(): Promise<void>;
}
