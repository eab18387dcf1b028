/**
 * workerd entry: `npx wrangler dev --env routes`. The script is bundled with the Worker: the build
 * step of [env.routes] in wrangler.toml runs `routes bundle` on `$ROUTES_SCRIPT` (default
 * examples/routes/hello/app.js), and this module imports the JSON it wrote. `app.static` serves the
 * files beside the script from that bundle, or from the R2 bucket bound as `STATIC` when there
 * is one. Handlers run in a sandbox in this isolate (workerd gives each isolate one thread).
 *
 * Vars (wrangler.toml or --var): ROUTES_ISSUER, ROUTES_AUDIENCE, ROUTES_POLICY (inline YAML or
 * JSON), ROUTES_INTROSPECTION_CLIENT_ID,
 * ROUTES_INTROSPECTION_CLIENT_SECRET, ROUTES_SESSION_SECRET (set it: otherwise each isolate signs
 * with its own random key), ROUTES_DEV, ROUTES_AUDIT (log | off), ROUTES_CPU_MS, ROUTES_WALL_MS,
 * ROUTES_MEM_MB, LOG_LEVEL.
 */
/// <reference path="../../lib/adapters/wasm.d.ts" />
/// <reference path="./worker-bundle.d.ts" />
import wasmModule from "../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm";
import bundle from "routes-bundle";
import { memoryFileTree, r2FileTree, type R2BucketLike } from "../../lib/files/r2.ts";
import { errorEnvelope } from "../../lib/http/errors.ts";
import { withRequestId } from "../../lib/http/request-id.ts";
import { createLogger, type LogLevel } from "../../lib/log.ts";
import { loadQuickJS } from "../../lib/sandbox/index.ts";
import { logAuditSink } from "./audit-log.ts";
import { renderValue } from "./render.ts";
import { readPolicy } from "./auth/policy.ts";
import { hostSecurity } from "./security.ts";
import { createRouteHost } from "./host.ts";
import { workerBundleFiles } from "./script/read-bundle.ts";
import { inProcessScriptRuntime } from "./script/runtime.ts";
import { DEFAULT_SCRIPT_LIMITS } from "./script/script-sandbox.ts";

export interface RoutesWorkerEnv {
  STATIC?: R2Bucket;
  ROUTES_ISSUER?: string;
  ROUTES_AUDIENCE?: string;
  /** Browser sign-in's client (default public-spa) and its secret. */
  ROUTES_CLIENT_ID?: string;
  ROUTES_CLIENT_SECRET?: string;
  /** A policy document (YAML or JSON), inline. */
  ROUTES_POLICY?: string;
  ROUTES_INTROSPECTION_CLIENT_ID?: string;
  ROUTES_INTROSPECTION_CLIENT_SECRET?: string;
  ROUTES_SESSION_SECRET?: string;
  ROUTES_DEV?: string;
  ROUTES_AUDIT?: string;
  ROUTES_CPU_MS?: string;
  ROUTES_WALL_MS?: string;
  ROUTES_MEM_MB?: string;
  LOG_LEVEL?: string;
  ACCESS_LOG?: string;
}

type Served = { fetch: (request: Request) => Response | Promise<Response> };

const STATIC_ROOT = "/site";
let served: Promise<Served> | undefined;

const number = (value: string | undefined, fallback: number) => (value && /^\d+$/.test(value) ? Number(value) : fallback);

async function build(env: RoutesWorkerEnv): Promise<Served> {
  const logger = createLogger({ fields: { service: "routes" }, level: (env.LOG_LEVEL as LogLevel | undefined) ?? "info" });
  const engine = await loadQuickJS({ wasmModule });
  const issuer = env.ROUTES_ISSUER ?? "http://127.0.0.1:5556";
  const files = env.STATIC ? r2FileTree(env.STATIC as unknown as R2BucketLike) : memoryFileTree(workerBundleFiles(bundle, STATIC_ROOT.slice(1)));
  const limits = { cpuMs: number(env.ROUTES_CPU_MS, DEFAULT_SCRIPT_LIMITS.cpuMs), wallMs: number(env.ROUTES_WALL_MS, DEFAULT_SCRIPT_LIMITS.wallMs), memMb: number(env.ROUTES_MEM_MB, DEFAULT_SCRIPT_LIMITS.memMb) };
  const security = hostSecurity({
    issuer,
    audience: env.ROUTES_AUDIENCE,
    introspection: env.ROUTES_INTROSPECTION_CLIENT_ID ? { clientId: env.ROUTES_INTROSPECTION_CLIENT_ID, clientSecret: env.ROUTES_INTROSPECTION_CLIENT_SECRET ?? "" } : undefined,
    clientId: env.ROUTES_CLIENT_ID,
    clientSecret: env.ROUTES_CLIENT_SECRET,
    sessionSecret: env.ROUTES_SESSION_SECRET,
    policy: env.ROUTES_POLICY ? await readPolicy(env.ROUTES_POLICY, "ROUTES_POLICY") : undefined,
  });
  const host = createRouteHost({
    renderer: renderValue,
    dev: env.ROUTES_DEV === "true" || env.ROUTES_DEV === "1",
    logger,
    files: { tree: files, root: STATIC_ROOT },
    session: security.session,
    auth: {
      ...security.auth,
      audit: env.ROUTES_AUDIT === "off" ? undefined : logAuditSink(logger),
    },
    runtime: (natives, hostCalls) => inProcessScriptRuntime(engine, { natives, hostCalls, limits }),
  });
  security.register(host);
  await host.loadScript(bundle.script);
  return withRequestId({ fetch: (request: Request) => host.fetch(request, { clientAddress: request.headers.get("cf-connecting-ip") ?? undefined }) }, { accessLog: env.ACCESS_LOG === "off" ? undefined : logger });
}

export default {
  async fetch(request: Request, env: RoutesWorkerEnv): Promise<Response> {
    served ??= build(env);
    let app: Served;
    try {
      app = await served;
    } catch (err) {
      served = undefined;
      return Response.json(errorEnvelope("INTERNAL", `the route host could not start: ${(err as Error).message}`), { status: 500 });
    }
    return app.fetch(request);
  },
} satisfies ExportedHandler<RoutesWorkerEnv>;
