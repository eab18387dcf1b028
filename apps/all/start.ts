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
import type { HostRuntime } from "#lib/runtime";
import { runIdpCli } from "../idp/cli.ts";
import { type RoutesPlatform, runRoutesCli } from "../routes/cli.ts";
import { runSessionsCli, type SessionsHost } from "../sessions/cli.ts";

/** The notes example's settings: its script, the provider it mounts at /idp, its policy. */
export const NOTES_ARGS = ["--script", "examples/routes/app.js", "--issuer", "/idp", "--policy-file", "examples/routes/policy.yaml"];
/** Where the route host keeps resources and audit events under `npm start`, whatever the script. */
export const ROUTES_DB_ARGS = ["--db", "file:./data/routes.db"];

/**
 * Unless a script is named (flag, ROUTES_SCRIPT, config file), the route host serves the notes
 * example on :8080 with the identity provider and the session service mounted in it, its policy,
 * and its notes and audit events in ./data/routes.db.
 */
export const DEFAULT_ROUTES_ARGS = [...NOTES_ARGS, ...ROUTES_DB_ARGS];

const named = (words: readonly string[], flag: string) => words.some((w) => w === `--${flag}` || w.startsWith(`--${flag}=`));
/** The value of `--flag v` or `--flag=v` among a service's words. */
function flagValue(words: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < words.length; i++) {
    if (words[i] === `--${flag}`) return words[i + 1];
    if (words[i]!.startsWith(`--${flag}=`)) return words[i]!.slice(flag.length + 3);
  }
  return undefined;
}

/**
 * The route host's words under `npm start`, and what to say about them. A script of your own
 * (ROUTES_SCRIPT, --routes.script or a config file) changes more than the script: the notes
 * example's policy and its provider at /idp are the example's, so they go too (the host's own
 * defaults apply: issuer http://127.0.0.1:5556, the provider `npm start` runs beside it; no
 * policy, actions granted by the token's scope, roles, groups or permissions). The database stays.
 */
export function routesArgs(
  env: Record<string, string | undefined>,
  flags: readonly string[],
  defaults: readonly string[] = DEFAULT_ROUTES_ARGS,
): { args: string[]; note?: string } {
  const scriptNamed = Boolean(env.ROUTES_SCRIPT) || named(flags, "script") || named(flags, "config-file");
  if (!scriptNamed) return { args: [...defaults, ...flags] };
  const db = env.ROUTES_DB || named(flags, "db") ? [] : ROUTES_DB_ARGS;
  const kept = (flag: string, envName: string) => Boolean(env[envName]) || named(flags, flag);
  const script = env.ROUTES_SCRIPT || flagValue(flags, "script");
  const dir = script && script.includes("/") ? script.slice(0, script.lastIndexOf("/") + 1) : "";
  const changes = [
    !kept("issuer", "ROUTES_ISSUER") && "browsers sign in at the provider on http://127.0.0.1:5556 (not one mounted at /idp)",
    !kept("policy-file", "ROUTES_POLICY_FILE") && !env.ROUTES_POLICY &&
    "no policy is loaded, so a route's action must be in the token's scope, roles, groups or permissions (a signed-in browser is mostly refused: 403)",
  ].filter((x): x is string => typeof x === "string");
  const advice = [
    !kept("policy-file", "ROUTES_POLICY_FILE") && !env.ROUTES_POLICY && `give your script a policy with --routes.policy-file ${dir}policy.yaml`,
    !kept("issuer", "ROUTES_ISSUER") && 'add --routes.issuer /idp only if the script mounts app.mount("/idp", require("idp").handler())',
  ].filter((x): x is string => typeof x === "string");
  const note = changes.length
    ? `start: routes serves your script with the route host's own defaults, not the notes example's settings: ${changes.join("; ")}. ` +
      `Data stays in ./data/routes.db. To change that, ${advice.join("; ")} (docs/routes.md, "Your own script").`
    : undefined;
  return { args: [...db, ...flags], note };
}

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

export async function startAll(
  runtime: HostRuntime,
  sessions: SessionsHost,
  routes: RoutesPlatform,
  defaultRoutesArgs: readonly string[] = DEFAULT_ROUTES_ARGS,
): Promise<void> {
  let flags: Record<Service, string[]>;
  try {
    flags = splitServiceFlags(runtime.args);
  } catch (err) {
    runtime.printError(`start: ${(err as Error).message}`);
    return runtime.exit(2);
  }
  const { args, note } = routesArgs(runtime.env, flags.routes, defaultRoutesArgs);
  await runIdpCli(runtime, ["serve-dev", ...flags.idp]);
  await runSessionsCli(runtime, sessions, ["serve", ...flags.sessions]);
  await runRoutesCli(runtime, routes, ["serve", ...args]);
  if (note) runtime.printError(note);
}
