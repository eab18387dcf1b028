/** Test helpers: a route host running a script given as text, handlers in this process. */
import { loadQuickJS } from "#lib/sandbox";
import { createRouteHost, type RouteHost, type RouteHostOptions } from "./host/host.ts";
import { inProcessScriptRuntime } from "./script/runtime.ts";
import { DEFAULT_SCRIPT_LIMITS, type ScriptLimits } from "./script/script-sandbox.ts";

export async function scriptHost(
  source: string,
  options: Omit<RouteHostOptions, "runtime"> & { limits?: Partial<ScriptLimits>; extraFiles?: Record<string, string> } = {},
): Promise<RouteHost> {
  const engine = await loadQuickJS();
  const { limits, extraFiles, ...rest } = options;
  const host = createRouteHost({
    ...rest,
    runtime: (natives, hostCalls) => inProcessScriptRuntime(engine, { natives, hostCalls, limits: { ...DEFAULT_SCRIPT_LIMITS, ...limits } }),
  });
  await host.loadScript({ entry: "/app.js", files: { "/app.js": source, ...extraFiles } });
  return host;
}

/** A request to a host without a server. */
export async function call(host: RouteHost, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
  const res = await host.fetch(new Request(`http://host.test${path}`, { method, body: init.body, headers: init.headers }), {
    requestId: "req-1",
    clientAddress: "127.0.0.9",
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // deno-lint-ignore no-explicit-any -- a test reads whatever JSON came back
  return { status: res.status, headers: res.headers, text, json: json as any };
}
