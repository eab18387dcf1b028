/** Starts every service on its default port, data in ./data: the README's "run it" command. */
import type { HostRuntime } from "../../lib/runtime.ts";
import { runIdpCli } from "../idp/cli.ts";
import { runRoutesCli, type RoutesPlatform } from "../routes/cli.ts";
import { runSessionsCli, type SessionsHost } from "../sessions/cli.ts";

/** The route host serves this example unless ROUTES_SCRIPT names another script. */
export const DEFAULT_ROUTES_SCRIPT = "examples/routes/hello/app.js";

export async function startAll(runtime: HostRuntime, sessions: SessionsHost, routes: RoutesPlatform): Promise<void> {
  await runIdpCli(runtime, ["serve-dev"]);
  await runSessionsCli(runtime, sessions, ["serve"]);
  await runRoutesCli(runtime, routes, runtime.env.ROUTES_SCRIPT ? ["serve"] : ["serve", "--script", DEFAULT_ROUTES_SCRIPT]);
}
