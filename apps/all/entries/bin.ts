/**
 * The `devservices` command of the npm package (package.json `bin`, built into dist/ by
 * scripts/build-package.mjs, run by Node without a TypeScript loader):
 *
 *   devservices idp <command> [flags]        the identity provider's command line (serve-dev, ...)
 *   devservices sessions serve [flags]       the session service
 *   devservices routes <command> [flags]     the route host (serve, routes, bundle)
 *   devservices start [--<service>.<flag>]   all three, as `npm start` in the repository
 *
 * Thread entries are files beside this one in dist/, and the route host's default script is the
 * hello example shipped in the package.
 */
import { fileURLToPath } from "node:url";
import { nodeRuntime } from "#lib/adapters/node";
import { nodeFileTree } from "#lib/adapters/node/files";
import { nodeThreadSpawner } from "#lib/adapters/node/threads";
import type { HostRuntime } from "#lib/runtime";
import { runIdpCli } from "../../idp/cli.ts";
import { type RoutesPlatform, runRoutesCli } from "../../routes/cli.ts";
import { runSessionsCli } from "../../sessions/cli.ts";
import { nodeSessionsHost } from "../../sessions/entries/node-host.ts";
import { startAll } from "../start.ts";

const USAGE = `usage: devservices <idp|sessions|routes|start> [arguments]  (devservices <name> --help for each)`;

const files = nodeFileTree();
const sessions = nodeSessionsHost(files, {
  threadEntry: new URL("./sessions-thread.mjs", import.meta.url),
  uiDirectory: new URL("./sessions-ui", import.meta.url),
});
const routes: RoutesPlatform = { files, spawnScriptThread: nodeThreadSpawner(new URL("./routes-thread.mjs", import.meta.url)), sessions };
const example = (path: string) => fileURLToPath(new URL(`../examples/routes/${path}`, import.meta.url));
const notesExample = ["--script", example("app.js"), "--issuer", "/idp", "--policy-file", example("policy.yaml"), "--db", "file:./data/routes.db"];

const runtime = nodeRuntime();
const [service, ...rest] = runtime.args;
const forService: HostRuntime = { ...runtime, args: rest };
switch (service) {
  case "idp":
    await runIdpCli(forService);
    break;
  case "sessions":
    await runSessionsCli(forService, sessions);
    break;
  case "routes":
    await runRoutesCli(forService, routes);
    break;
  case "start":
    await startAll(forService, sessions, routes, notesExample);
    break;
  default:
    if (service === "--help" || service === "-h" || service === "help") runtime.print(USAGE);
    else {
      runtime.printError(service === undefined ? USAGE : `devservices: unknown command "${service}"\n${USAGE}`);
      runtime.exit(2);
    }
}
