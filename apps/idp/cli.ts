/** `serve-dev` and `print-config` for the identity provider, on any HostRuntime. */
import { lastFlag, parseArgs } from "../../lib/config/flags.ts";
import { createLogger } from "../../lib/log.ts";
import { parseListenAddress, type HostRuntime, type RunningServer } from "../../lib/runtime.ts";
import { createApp } from "./app.ts";

const USAGE = `usage: idp <serve-dev|print-config> [--issuer URL] [--addr HOST:PORT]`;

export async function runIdpCli(runtime: HostRuntime, argv: string[] = runtime.args): Promise<RunningServer | undefined> {
  const args = parseArgs(argv);
  const [command] = args.positionals;
  const addr = lastFlag(args, "addr") ?? runtime.env.IDP_ADDR ?? "127.0.0.1:5556";
  const issuer = lastFlag(args, "issuer") ?? runtime.env.IDP_ISSUER ?? `http://localhost:${parseListenAddress(addr).port}`;
  if (command === "print-config") {
    runtime.print(JSON.stringify({ oidc: { issuer, addr } }, null, 2));
    return undefined;
  }
  if (command !== "serve-dev") {
    runtime.printError(USAGE);
    runtime.exit(2);
  }
  const logger = createLogger({ fields: { service: "idp" }, level: (runtime.env.LOG_LEVEL as never) ?? "info" });
  const app = createApp({ issuer, logger });
  const server = await runtime.serve((req, env) => app.fetch(req, env), parseListenAddress(addr));
  logger.info("idp listening", { issuer, addr: `${server.hostname}:${server.port}` });
  runtime.onShutdown(() => server.close());
  return server;
}
