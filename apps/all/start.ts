/** Starts every service on its default port, data in ./data: the README's "run it" command. */
import type { HostRuntime } from "../../lib/runtime.ts";
import { runIdpCli } from "../idp/cli.ts";
import { runSessionsCli, type SessionsHost } from "../sessions/cli.ts";

export async function startAll(runtime: HostRuntime, sessions: SessionsHost): Promise<void> {
  await runIdpCli(runtime, ["serve-dev"]);
  await runSessionsCli(runtime, sessions, ["serve"]);
}
