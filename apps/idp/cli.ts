/**
 * The identity provider's command line, on any HostRuntime (Node or Deno):
 *
 *   idp serve-dev [issuer] [options]   serve the provider (--print-parsed-fields shows each field's source)
 *   idp print-config [issuer] [options] print the resolved configuration as YAML (or --format json)
 *   idp gen-keys                        print a fresh private JWK set for --signing-keys-file
 *
 * Bad configuration prints one line `idp: <message>` on stderr and exits with code 2.
 */
import type { Hono } from "hono";
import { ConfigError, formatFieldTable, formatJson, formatYaml, sectionHelp } from "#lib/config";
import { parseCommandLine, type ParsedArgs } from "#lib/config/flags";
import { configSourcesLine, listenFailure, printBanner, serviceLogger } from "#lib/cli-output";
import { describeAllowlist, hostAllowlist, listensBeyondLoopback, listenUrl, warnIfHostCheckOff, withAllowedHosts } from "#lib/http";
import { type HostRuntime, parseListenAddress, type RunningServer, type ServeEnv } from "#lib/runtime";
import { afterThisTurn, openSqlStore } from "#lib/db/open";
import { createApp, type IdpStateStore } from "./app.ts";
import { type ConfigIo, IDP_FLAGS, idpAppOptions, loadIdpConfig, type OidcConfig, oidcSection } from "./config.ts";
import { generateSigningKey, KIDS } from "./domain/keys.ts";
import { oauthMisdirected } from "./routes/http.ts";
import { openStateStore } from "./state/sql.ts";

const USAGE = `usage: idp <command> [options]

commands:
  serve-dev [issuer]      serve the identity provider
  print-config [issuer]   print the resolved configuration (YAML, each value commented with its source)
  gen-keys                print a new private JWK set (every kid /jwks publishes) as JSON

options (flag / environment variable / default):
${sectionHelp(oidcSection, { flag: 22, env: 24 })}
  --config-file PATH      YAML file with the fields under "oidc:" (repeatable; later files win)
  --profile NAME          IDP_PROFILE; profile from $XDG_CONFIG_HOME/idp/profiles.yaml (default ~/.config/idp/profiles.yaml)
  --print-parsed-fields   serve-dev: print each field, its value and the source that set it
  --format yaml|json      print-config output format (default yaml)
  -h, --help              this text

precedence, lowest to highest: defaults < profile < config files < environment < positional < flags
also honored: IDP_USERS (inline users document), IDP_SIGNING_KEYS (inline JWK set), LOG_LEVEL

several instances with one --state database act as one provider (shared codes, tokens, sessions,
keys and debug settings); apps/idp/entries/edge.ts serves the same from environment variables alone`;

const COMMANDS = ["serve-dev", "print-config", "gen-keys", "help"] as const;
type Command = (typeof COMMANDS)[number];

/** Errors that mean "the configuration is wrong": one line on stderr, exit code 2. */
function isConfigurationError(err: unknown): err is Error {
  return err instanceof ConfigError ||
    (err instanceof Error && ["INVALID_USERS", "INVALID_SIGNING_KEYS", "INVALID_ENV"].includes((err as { code?: string }).code ?? ""));
}

function configIo(runtime: HostRuntime): ConfigIo {
  return { env: runtime.env, readTextFile: (path) => runtime.readTextFile(runtime.resolvePath(runtime.cwd(), path)) };
}

/** The words after the command are the section's positional arguments. */
const afterCommand = (args: ParsedArgs): ParsedArgs => ({ positionals: args.positionals.slice(1), flags: args.flags });

function rejectFlags(args: ParsedArgs, command: string, names: string[]): void {
  for (const name of names) {
    if (args.flags.has(name)) throw new ConfigError("CONFIG_UNKNOWN_FLAG", `--${name} is not an option of ${command}`, `flag:--${name}`);
  }
}

function profileLine(config: OidcConfig): string {
  return `profile ${config.profile.name} (${config.profile.source}); profiles file ${config.profilesFile}`;
}

async function printConfig(runtime: HostRuntime, args: ParsedArgs): Promise<void> {
  rejectFlags(args, "print-config", ["print-parsed-fields"]);
  const format = args.flags.get("format")?.at(-1) ?? "yaml";
  if (format !== "yaml" && format !== "json") throw new ConfigError("CONFIG_INVALID_VALUE", `--format must be yaml or json, got "${format}"`, "flag:--format");
  const config = await loadIdpConfig(afterCommand(args), configIo(runtime));
  runtime.print(format === "json" ? formatJson(oidcSection, config) : await formatYaml(oidcSection, config, `idp configuration: ${profileLine(config)}`));
}

/** A private JWK set with fresh keys (of each kid's algorithm) for every kid /jwks publishes. */
export async function generateSigningKeySet(): Promise<{ keys: Record<string, unknown>[] }> {
  const keys = await Promise.all(KIDS.map((kid) => generateSigningKey(kid)));
  return { keys: keys as Record<string, unknown>[] };
}

/** The state database (`--state` other than memory), migrated; every instance on it is one provider. */
async function openState(runtime: HostRuntime, config: OidcConfig): Promise<IdpStateStore | undefined> {
  const url = config.values.state;
  if (url === "memory") return undefined;
  try {
    return await openStateStore(() => openSqlStore(runtime, url, config.values["state-auth-token"] || undefined), { shared: true });
  } catch (err) {
    throw new ConfigError(
      "CONFIG_INVALID_VALUE",
      `state database ${url} (from ${config.sources.state}) cannot be opened: ${(err as Error).message}`,
      config.sources.state,
      "state",
    );
  }
}

/** Dynamic client registration (RFC 7591) and the PAR requirement, as the banner shows them. */
function registrationLine(issuer: string, policy: string | undefined, requirePar: boolean | undefined): string {
  const par = requirePar ? "; every authorization request must be pushed to /par" : "";
  if (policy === "off") return `off (--registration)${par}`;
  return `${policy ?? "open"} at ${issuer}/register${policy === "token" ? " (Authorization: Bearer <registration-token>)" : ""}${par}`;
}

function stateLine(url: string): string {
  if (url === "memory") return "in memory (restart: everything is new)";
  const shown = url.replace(/\?.*$/, "");
  return `${shown} (kept across restarts; instances on it act as one provider)`;
}

/**
 * Beyond loopback the debug interface needs a token: it answers loopback callers only, but a
 * reverse proxy, a tunnel or a container's port mapping on this machine makes every caller local.
 */
function requireDebugTokenBeyondLoopback(config: OidcConfig, token: string | undefined): void {
  if (token || !listensBeyondLoopback(parseListenAddress(config.values.addr).hostname)) return;
  throw new ConfigError(
    "CONFIG_INVALID_VALUE",
    `refusing to listen on ${config.values.addr} (from ${config.sources.addr}) without a debug token: the debug interface resets, re-keys and ` +
      "re-clocks the provider. Set --debug-token or IDP_DEBUG_TOKEN (e.g. IDP_DEBUG_TOKEN=$(openssl rand -hex 32)), or listen on 127.0.0.1",
    config.sources.addr,
    "addr",
  );
}

async function serveDev(runtime: HostRuntime, args: ParsedArgs): Promise<RunningServer> {
  rejectFlags(args, "serve-dev", ["format"]);
  const io = configIo(runtime);
  const config = await loadIdpConfig(afterCommand(args), io);
  const options = await idpAppOptions(config, io);
  requireDebugTokenBeyondLoopback(config, options.debugToken);
  const state = await openState(runtime, config);
  if (state) options.state = state;
  options.afterThisTurn = afterThisTurn;
  // Printed once the issuer is final (with port 0, after listening).
  const showFields = args.flags.get("print-parsed-fields")?.at(-1) === "true";
  const printFields = () => {
    if (showFields) runtime.print(`${formatFieldTable(oidcSection, config)}\n(${profileLine(config)})`);
  };
  const logger = serviceLogger(runtime, "idp");
  const address = parseListenAddress(config.values.addr);
  // With port 0 the issuer derived from the address can only be known once the socket listens.
  const issuerAfterListen = address.port === 0 && config.sources.issuer === "derived:addr";
  let app: Hono | undefined = issuerAfterListen ? undefined : createApp({ ...options, logger });
  if (app) printFields();
  // Only the names this provider is known by reach it (DNS rebinding): the issuer's host, the
  // listen address when it is a name or an address of its own, and --allowed-hosts.
  const hosts = hostAllowlist({ urls: [options.issuer, listenUrl(address)], hosts: config.values["allowed-hosts"] });
  let ready: (app: Hono) => void = () => {};
  const appReady = app ? Promise.resolve(app) : new Promise<Hono>((resolve) => (ready = resolve));
  let server: RunningServer;
  try {
    // Not an async function: a response the app gives synchronously is then written synchronously.
    const guarded = withAllowedHosts(
      { fetch: (req: Request, env: ServeEnv) => (app ? app.fetch(req, env) : appReady.then((built) => built.fetch(req, env))) },
      hosts,
      oauthMisdirected,
    );
    server = await runtime.serve((req, env) => guarded.fetch(req, env), address);
  } catch (err) {
    runtime.printError(listenFailure("idp", config.values.addr, err));
    await state?.close();
    return runtime.exit(1);
  }
  if (!app) {
    config.values.issuer = options.issuer = `http://localhost:${server.port}`;
    ready(app = createApp({ ...options, logger }));
    printFields();
  }
  logger.info("idp listening", { issuer: options.issuer, addr: `${server.hostname}:${server.port}`, allowed_hosts: describeAllowlist(hosts) });
  warnIfHostCheckOff(logger, hosts);
  const issuer = options.issuer.replace("{origin}", `http://localhost:${server.port}`).replace(/\/+$/, "");
  const clientId = config.values["client-id"];
  printBanner(runtime, `identity provider  http://${server.hostname}:${server.port}`, [
    ["issuer", issuer],
    ["discovery", `${issuer}/.well-known/openid-configuration`],
    [
      "login page",
      `${issuer}/debug/client (signs in with the code flow and shows the tokens decoded; loopback only${
        options.debugToken ? "; open the debug link first" : ""
      })`,
    ],
    ["clients", [clientId, ...["dev-client", "public-spa", "web-app"].filter((c) => c !== clientId)].join(", ") + " (web-app's secret: web-app-secret)"],
    [
      "debug",
      options.debugToken
        ? `${issuer}/debug/ui?token=${
          encodeURIComponent(options.debugToken)
        } (loopback only; the link sets a cookie; JSON at ${issuer}/debug with Authorization: Bearer)`
        : `${issuer}/debug/ui (loopback only; JSON at ${issuer}/debug)`,
    ],
    ["registration", registrationLine(issuer, options.registration, options.requirePushedAuthorizationRequests)],
    ["state", stateLine(config.values.state)],
    ["allowed hosts", describeAllowlist(hosts)],
    ["config", configSourcesLine(config.profile, config.sources)],
  ]);
  runtime.onShutdown(async () => {
    logger.info("idp shutting down");
    await server.close();
    await state?.close(); // what was accepted is committed first
    logger.info("idp stopped");
  });
  return server;
}

/**
 * Runs one command. `serve-dev` resolves with the running server (apps/all/start.ts keeps it);
 * the other commands resolve `undefined` after printing.
 */
export async function runIdpCli(runtime: HostRuntime, argv: string[] = runtime.args): Promise<RunningServer | undefined> {
  try {
    const args = parseCommandLine(argv, IDP_FLAGS);
    const command = args.positionals[0];
    if (args.flags.get("help")?.at(-1) === "true" || command === "help") {
      runtime.print(USAGE);
      return undefined;
    }
    if (command === undefined || !COMMANDS.includes(command as Command)) {
      runtime.printError(command === undefined ? "idp: missing command" : `idp: unknown command "${command}"`);
      runtime.printError(USAGE.split("\n\n")[0]! + "  (idp --help for more)");
      return runtime.exit(2);
    }
    switch (command as Exclude<Command, "help">) {
      case "print-config":
        await printConfig(runtime, args);
        return undefined;
      case "gen-keys":
        if (args.positionals.length > 1 || args.flags.size > 0) throw new ConfigError("CONFIG_TOO_MANY_ARGUMENTS", "gen-keys takes no arguments");
        runtime.print(JSON.stringify(await generateSigningKeySet(), null, 2));
        return undefined;
      case "serve-dev":
        return await serveDev(runtime, args);
    }
  } catch (err) {
    if (!isConfigurationError(err)) throw err;
    runtime.printError(`idp: ${err.message}`);
    return runtime.exit(2);
  }
}
