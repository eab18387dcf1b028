/**
 * TypeScript declarations of the script API for editors (`npm run routes -- types` writes them):
 * httpmod's builder stage by stage, so a call a stage does not offer is a type error (`.csrf()`
 * after `.public()`, `.handle` before `.allow`, `.resource` after it); ctx, request and response;
 * the host's modules (`resources`, `audit`, the mountables `idp` and `sessions`, assets modules);
 * and `require`'s overloads by module name.
 *
 * One interface per value httpmod.js makes at run time, with one member a line: httpmod-types.test.ts
 * enumerates what each value offers inside the sandbox and compares it with the interface
 * (`declaredMembers`), so the declarations cannot drift from js/httpmod.js; it also type-checks
 * examples/routes and the scripts of testdata/types that must fail.
 */

/** The interfaces, by the runtime value each describes (the test's map). */
export const DECLARED_VALUES = {
  Module: 'require("httpmod")',
  App: "httpmod.app()",
  Started: 'app.get("/x")',
  Policy: 'app.get("/x").auth(user)',
  Ready: 'app.get("/x").public() and .auth(user).allow(action)',
  OptionalUser: "httpmod.user()",
  RequiredUser: "httpmod.user().required()",
  ResourceSpec: 'httpmod.resource("t")',
  Markup: "httpmod.html`...`",
  PlannedContext: "ctx",
  Request: "ctx.request",
  Session: "ctx.request.session",
  Response: "res",
  ResourcesModule: 'require("resources")',
  AuditModule: 'require("audit")',
  MountableModule: 'require("idp"), require("sessions")',
  Mountable: 'require("idp").handler()',
  AssetsModule: 'require("fs:assets")',
} as const;

const HEADER = `// httpmod.d.ts: the route host's script API, for editors and \`tsc --checkJs\`.
// Written by \`npm run routes -- types\` (apps/routes/script/httpmod-types.ts); write it again after
// upgrading the host. With a jsconfig.json beside your script (docs/routes.md, "Types for editors"):
//   { "compilerOptions": { "checkJs": true, "strict": true, "noImplicitAny": false, "target": "ES2023", "lib": ["ES2023"], "types": [] },
//     "include": ["**/*.js", "httpmod.d.ts"] }
// or \`// @ts-check\` at the top of a script, calls a stage does not offer are errors in the editor.
`;

const BODY = `
declare namespace Httpmod {
  /** The names of a pattern's \`:name\` segments. */
  type ParamNames<P extends string> = P extends \`\${string}:\${infer Rest}\`
    ? Rest extends \`\${infer Name}/\${infer Tail}\` ? Name | ParamNames<\`/\${Tail}\`> : Rest
    : never;
  /** \`ctx.params\` of a pattern: one string per \`:name\` segment. */
  type Params<P extends string> = string extends P ? Record<string, string> : { readonly [K in ParamNames<P>]: string };
  /** Resources a route declared, by type: a \`.mustExist()\` one is never null. */
  type Resources = Record<string, ResourceRef | null>;

  /** A value only the module makes (\`.auth\` and \`.resource\` refuse look-alikes). */
  const made: unique symbol;

  interface Module {
    /** The app: routes, mounts and static files are registered on it. */
    app(): App;
    /** A user spec for \`.auth(...)\`; \`.required()\` makes a missing actor a 401. */
    user(): OptionalUser;
    /** A resource spec for \`.resource(...)\`: the host loads it and the authorizer sees it. */
    resource<T extends string>(type: T): ResourceSpec<T, false>;
    /** Escapes every interpolated value (markup made by html or raw is kept; lists are joined). */
    html(strings: TemplateStringsArray, ...values: unknown[]): Markup;
    /** Trusted markup, kept as it is by html (never text a user could have written). */
    raw(text: unknown): Markup;
  }

  interface App {
    get<P extends string>(pattern: P): Started<Params<P>>;
    post<P extends string>(pattern: P): Started<Params<P>>;
    put<P extends string>(pattern: P): Started<Params<P>>;
    patch<P extends string>(pattern: P): Started<Params<P>>;
    delete<P extends string>(pattern: P): Started<Params<P>>;
    /** Every method. */
    all<P extends string>(pattern: P): Started<Params<P>>;
    /** A dynamic or uncommon method. */
    route<P extends string>(method: string, pattern: P): Started<Params<P>>;
    /** A host service under a prefix (before any route). */
    mount(prefix: string, mountable: Mountable, options?: MountOptions): App;
    /** The same as mount. */
    mountHandler(prefix: string, mountable: Mountable, options?: MountOptions): App;
    /** A directory below the host's static root. */
    static(prefix: string, directory: string): App;
    /** A directory of an assets module (\`root\` relative, or rooted at the module: "/app/public"). */
    staticFromAssetsModule(prefix: string, assets: AssetsModule, root?: string): App;
    /** A single-page app: its files as they are, its index for every other GET and HEAD path. */
    spaFromAssetsModule(prefix: string, assets: AssetsModule, root?: string, options?: SpaOptions): App;
  }

  interface MountOptions {
    /** The mounted service sees the path below the prefix. */
    stripPrefix?: boolean;
    /** Paths that skip this mount (on to later mounts, then routes). */
    excludePrefixes?: string[];
  }

  /** What a rate limit counts by: the client's address (before authentication), or what authentication established. */
  type RateLimitKey = "ip" | "actor" | "token" | "session";

  interface RateLimitOptions<K extends RateLimitKey> {
    /** Requests a window (a whole number from 1). */
    limit: number;
    /** The window, seconds (1 to 86400). */
    windowSeconds: number;
    /** Default "ip"; a public route counts by "ip" only. */
    key?: K;
  }

  interface SpaOptions {
    /** The file answering every path that names no file (default "index.html"). */
    index?: string;
    /** Paths left to the routes (default ["/api"]). */
    excludePrefixes?: string[];
  }

  /** After \`app.<verb>(pattern)\`: the route is public, or authenticated. */
  interface Started<P> {
    /** Reachable without an actor. */
    public(): Ready<P, null, {}>;
    auth(user: RequiredUser): Policy<P, Actor, {}>;
    auth(user: OptionalUser): Policy<P, Actor | null, {}>;
  }

  /** After \`.auth(user)\`: resources, CSRF, audit, then the action. */
  interface Policy<P, A, R> {
    resource<T extends string, E extends boolean>(spec: ResourceSpec<T, E>): Policy<P, A, R & { [K in T]: E extends true ? ResourceRef : ResourceRef | null }>;
    /** Unsafe methods need the CSRF token (403 without it). */
    csrf(): Policy<P, A, R>;
    audit(event: string): Policy<P, A, R>;
    /** At most \`limit\` requests a window per key (429 with Retry-After past it). */
    rateLimit(options: RateLimitOptions<RateLimitKey>): Policy<P, A, R>;
    /** The action the host's authorizer decides on. */
    allow(action: string): Ready<P, A, R>;
  }

  /** The plan is declared: the route's target. */
  interface Ready<P, A, R> {
    audit(event: string): Ready<P, A, R>;
    /** At most \`limit\` requests a window per key (429 with Retry-After past it); public routes count by "ip". */
    rateLimit(options: RateLimitOptions<A extends null ? "ip" : RateLimitKey>): Ready<P, A, R>;
    handle(handler: Handler<P, A, R>): void;
    /** The pipeline runs, then the request goes to the mountable (\`stripPrefix\` needs a pattern ending in /*). */
    mount(mountable: Mountable, options?: { stripPrefix?: boolean }): void;
  }

  type Handler<P, A, R> = (ctx: PlannedContext<P, A, R>, res: Response) => unknown;

  interface OptionalUser {
    readonly [made]: "user";
    required(): RequiredUser;
  }

  interface RequiredUser {
    readonly [made]: "required user";
  }

  interface ResourceSpec<T extends string, E extends boolean> {
    readonly [made]: T;
    /** The resource id is this path parameter. */
    idFromParam(name: string): ResourceSpec<T, E>;
    /** The tenant id is this path parameter. */
    tenantFromParam(name: string): ResourceSpec<T, E>;
    /** A missing resource is 404 (otherwise the handler sees null). */
    mustExist(): ResourceSpec<T, true>;
  }

  /** What html\`...\` and raw() make. */
  interface Markup {
    readonly text: string;
    toString(): string;
  }

  interface Actor {
    id: string;
    kind: string;
    tenantIds?: string[];
    claims?: Record<string, any>;
  }

  interface ResourceRef {
    id: string;
    tenantId: string;
    type?: string;
    owner?: string;
    /** Attributes, as stored. */
    [attribute: string]: any;
  }

  /** The handler's first argument. */
  interface PlannedContext<P = Record<string, string>, A = Actor | null, R = {}> {
    readonly request: Request;
    /** Null on public routes (and for a missing optional user). */
    readonly actor: A;
    /** JSON and forms parsed; any other body a string; null without one. */
    readonly body: any;
    readonly params: P;
    readonly resources: R & Resources;
    resource<K extends keyof R>(name: K): R[K];
    resource(name: string): ResourceRef | null;
    /** The action of \`.allow\` (undefined on public routes). */
    readonly action: string | undefined;
    /** "METHOD pattern". */
    readonly routeName: string;
    /** For forms of a signed-in session (authenticated routes on a host with a CSRF protector). */
    readonly csrfToken: string | undefined;
  }

  interface Request {
    method: string;
    url: string;
    /** Still percent-encoded. */
    path: string;
    /** A list when a key repeats. */
    query: Record<string, string | string[] | undefined>;
    params: Record<string, string>;
    /** Lower-case names; repeated headers joined with ", ". */
    headers: Record<string, string | undefined>;
    cookies: Record<string, string | undefined>;
    session: Session | null;
    ip: string;
    body: any;
    rawBody: string;
  }

  /** The host session: an identifier, not a credential. */
  interface Session {
    id: string;
    isNew: boolean;
    cookieName: string;
  }

  /** The handler's second argument. */
  interface Response {
    status(code: number): this;
    set(name: string, value: string | number): this;
    type(contentType: string): this;
    json(value: unknown): void;
    /** A string as HTML or text, markup as HTML, bytes as octet-stream, anything else as JSON. */
    send(value?: unknown): void;
    /** A string or markup as HTML; any other value goes to the host's renderer. */
    html(value: unknown): void;
    redirect(url: string): void;
    redirect(status: number, url: string): void;
    end(): void;
  }

  interface ResourcesModule {
    get(type: string, id: string): Promise<ResourceRef | null>;
    /** Newest created first. */
    list(type: string, options?: { tenantId?: string; owner?: string; limit?: number }): Promise<ResourceRef[]>;
    /** The stored ref (a new id when none is given). */
    put(input: { type: string; id?: string; tenantId?: string; owner?: string | null; attributes?: Record<string, unknown> }): Promise<ResourceRef>;
    /** True when there was one. */
    remove(type: string, id: string): Promise<boolean>;
  }

  type AuditOutcome = "allowed" | "denied" | "completed" | "failed";

  interface AuditEvent {
    event: string;
    outcome: AuditOutcome;
    reason?: string;
    statusCode?: number;
    routeName?: string;
    method: string;
    pattern: string;
    action?: string;
    actor?: Actor;
    resource?: ResourceRef;
    resources?: Record<string, ResourceRef | null>;
    requestId: string;
    at: string;
  }

  interface AuditModule {
    /** Newest first. */
    /** \`outcome\`: one of AuditOutcome (any other string is a TypeError when called). */
    events(query?: { actor?: string; outcome?: AuditOutcome | (string & {}); since?: string; resource?: { type?: string; id: string }; limit?: number }): Promise<AuditEvent[]>;
  }

  /** A host service a script may mount. */
  interface MountableModule {
    handler(): Mountable;
  }

  interface Mountable {
    readonly $mountable: string;
  }

  interface AssetsModule {
    readonly $assets: string;
    readonly $name: string;
  }
}

declare module "httpmod" {
  const httpmod: Httpmod.Module;
  export = httpmod;
}
declare module "resources" {
  const resources: Httpmod.ResourcesModule;
  export = resources;
}
declare module "audit" {
  const audit: Httpmod.AuditModule;
  export = audit;
}
declare module "idp" {
  const idp: Httpmod.MountableModule;
  export = idp;
}
declare module "sessions" {
  const sessions: Httpmod.MountableModule;
  export = sessions;
}
/** Assets modules as the original names them (the host installs \`NAME\` also as \`fs:NAME\`). */
declare module "fs:*" {
  const assets: Httpmod.AssetsModule;
  export = assets;
}
`;

/** \`require\`'s overloads, for code that calls it outside an import (module names give their types). */
const REQUIRE = `
declare function require(name: "httpmod"): Httpmod.Module;
declare function require(name: "resources"): Httpmod.ResourcesModule;
declare function require(name: "audit"): Httpmod.AuditModule;
declare function require(name: "idp" | "sessions"): Httpmod.MountableModule;
declare function require(name: \`fs:\${string}\`): Httpmod.AssetsModule;
/** Files beside the script (\`./lib/x.js\`, \`.json\`). */
declare function require(name: \`./\${string}\` | \`../\${string}\`): any;
`;

/** The declarations, with a module for each assets module name the host installs (`--assets`). */
export function httpmodDeclarations(options: { assets?: string[] } = {}): string {
  const names = (options.assets ?? []).filter((name) => !name.startsWith("fs:"));
  const assets = names.map((name) => `declare module ${JSON.stringify(name)} {\n  const assets: Httpmod.AssetsModule;\n  export = assets;\n}\n`).join("");
  const overloads = names.map((name) => `declare function require(name: ${JSON.stringify(name)}): Httpmod.AssetsModule;\n`).join("");
  return HEADER + BODY + assets + REQUIRE + overloads;
}

/** Each interface's members as declared (one a line, four spaces in), for the drift test. */
export function declaredMembers(declarations: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of declarations.matchAll(/^ {2}interface (\w+)[^\n]*\{\n([\s\S]*?)^ {2}\}/gm)) {
    const names = [...m[2]!.matchAll(/^ {4}(?:readonly )?([\w$]+)\??[(<:]/gm)].map((x) => x[1]!);
    out[m[1]!] = [...new Set(names)].sort();
  }
  return out;
}
