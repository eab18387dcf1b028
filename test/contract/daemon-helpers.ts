/**
 * Helpers for the local daemons' start-up checks (issue #28): a service's command line run to its
 * end on Node or Deno (workerd has none), and the cookie a sign-in link sets. Not a test file.
 */
import { runToEnd } from "../runtimes/processes.ts";
import { ROOT, type RuntimeName } from "../runtimes/service.ts";

const ENTRY = { idp: ["apps/idp/entries/node.ts", "serve-dev"], sessions: ["apps/sessions/entries/node.ts", "serve"] } as const;

/** `idp serve-dev` / `sessions serve` with these words, to its exit (for one that refuses to start). */
export function runServiceCli(service: keyof typeof ENTRY, runtime: RuntimeName, args: string[], env: Record<string, string> = {}) {
  const [entry, command] = ENTRY[service];
  const words = runtime === "deno"
    ? ["node_modules/deno/deno", "run", "-A", entry.replace("node.ts", "deno.ts"), command, ...args]
    : [process.execPath, "lib/adapters/node/run.mjs", entry, command, ...args];
  const [bin, ...rest] = words;
  // A service that starts after all is ended: its code is then null, never the 2 a refusal gives.
  return runToEnd(bin!, rest, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn", ...env }, timeoutMs: 30_000 });
}

/** `name=value` of the Set-Cookie for `name`, ready for a Cookie header. */
export function cookieFrom(res: Response, name: string): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie in ${JSON.stringify(res.headers.getSetCookie())}`);
  return line.split(";")[0]!;
}
