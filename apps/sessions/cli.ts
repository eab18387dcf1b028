/** `serve` for the session service, on any HostRuntime. */
import { lastFlag, parseArgs } from "../../lib/config/flags.ts";
import { openSqlStore } from "../../lib/db/open.ts";
import { createLogger } from "../../lib/log.ts";
import { parseListenAddress, type HostRuntime, type RunningServer } from "../../lib/runtime.ts";
import { createApp } from "./app.ts";

const USAGE = `usage: sessions serve [--addr HOST:PORT] [--db URL]`;

export async function runSessionsCli(runtime: HostRuntime, argv: string[] = runtime.args): Promise<RunningServer | undefined> {
  const args = parseArgs(argv);
  const [command] = args.positionals;
  if (command !== "serve") {
    runtime.printError(USAGE);
    runtime.exit(2);
  }
  const addr = lastFlag(args, "addr") ?? runtime.env.SESSIONS_ADDR ?? "127.0.0.1:3210";
  const dbUrl = lastFlag(args, "db") ?? runtime.env.SESSIONS_DB ?? "file:./data/sessions.db";
  const logger = createLogger({ fields: { service: "sessions" }, level: (runtime.env.LOG_LEVEL as never) ?? "info" });
  const store = await openSqlStore(runtime, dbUrl, runtime.env.SESSIONS_DB_AUTH_TOKEN);
  const app = createApp({ store, logger });
  const server = await runtime.serve((req, env) => app.fetch(req, env), parseListenAddress(addr));
  logger.info("sessions listening", { addr: `${server.hostname}:${server.port}`, db: dbUrl });
  runtime.onShutdown(async () => {
    await server.close();
    await store.close();
  });
  return server;
}
