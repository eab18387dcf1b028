/**
 * Starts every service on its default port, data in ./data: the README's "run it" command.
 *
 *   npm start -- --idp.client-id my-app --idp.redirect-uris http://localhost:4000/callback \
 *                --sessions.threads 4 --routes.script app.js --routes.dev
 *
 * A flag `--<service>.<flag> [value]` goes to that service's command line as `--<flag> [value]`
 * (`--idp.x=y` too); each service also reads its own environment variables (IDP_*, SESSIONS_*,
 * ROUTES_*) and config files as when started alone.
 */
import type { HostRuntime } from "../../lib/runtime.ts";
import { runIdpCli } from "../idp/cli.ts";
import { runRoutesCli, type RoutesPlatform } from "../routes/cli.ts";
import { runSessionsCli, type SessionsHost } from "../sessions/cli.ts";

/**
 * Unless a script is named (flag, ROUTES_SCRIPT, config file), the route host serves the notes
 * example on :8080 with the identity provider and the session service mounted in it, its policy,
 * and its notes and audit events in ./data/routes.db.
 */
export const DEFAULT_ROUTES_ARGS = ["--script", "examples/routes/app.js", "--issuer", "/idp", "--policy-file", "examples/routes/policy.yaml", "--db", "file:./data/routes.db"];

const SERVICES = ["idp", "sessions", "routes"] as const;
type Service = (typeof SERVICES)[number];

/** Splits `--idp.x v --routes.y` into each service's own words; throws on anything else. */
export function splitServiceFlags(argv: readonly string[]): Record<Service, string[]> {
  const out: Record<Service, string[]> = { idp: [], sessions: [], routes: [] };
  let current: Service | undefined;
  for (const word of argv) {
    const m = /^--(idp|sessions|routes)\.([^=]+)(=.*)?$/.exec(word);
    if (m) {
      current = m[1] as Service;
      out[current].push(`--${m[2]}${m[3] ?? ""}`);
    } else if (!word.startsWith("-") && current) {
      out[current].push(word); // the value of the flag before
    } else {
      throw new Error(`${word}: start takes flags as --<service>.<flag> (services: ${SERVICES.join(", ")}), e.g. --idp.client-id my-app`);
    }
  }
  return out;
}

export async function startAll(runtime: HostRuntime, sessions: SessionsHost, routes: RoutesPlatform, defaultRoutesArgs: readonly string[] = DEFAULT_ROUTES_ARGS): Promise<void> {
  let flags: Record<Service, string[]>;
  try {
    flags = splitServiceFlags(runtime.args);
  } catch (err) {
    runtime.printError(`start: ${(err as Error).message}`);
    return runtime.exit(2);
  }
  const scriptNamed = runtime.env.ROUTES_SCRIPT || flags.routes.some((w) => w === "--script" || w.startsWith("--script=") || w === "--config-file" || w.startsWith("--config-file="));
  await runIdpCli(runtime, ["serve-dev", ...flags.idp]);
  await runSessionsCli(runtime, sessions, ["serve", ...flags.sessions]);
  await runRoutesCli(runtime, routes, ["serve", ...(scriptNamed ? [] : defaultRoutesArgs), ...flags.routes]);
}
