/**
 * Starts one service on one runtime, on a free loopback port, and hands back its base URL. The
 * contract suites call `startService` in `beforeAll`; which runtime they get comes from the vitest
 * project (`TEST_RUNTIME`), so one suite runs unchanged on node, deno and workerd.
 *
 * Configuration is passed as environment variables (the services' `IDP_*` / `SESSIONS_*` /
 * `ROUTES_*` settings); on workerd they become wrangler `--var`s, so a suite configures every
 * runtime alike (`ROUTES_SCRIPT` is also read by the route host's build step, which bundles it).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { answersOk, runToEnd, startProcess, waitUntilReady } from "./processes.ts";

export type RuntimeName = "node" | "deno" | "workerd";
export type ServiceName = "idp" | "sessions" | "routes";

export interface StartOptions {
  /** Service settings, as environment variables (wrangler vars on workerd). `{port}` in a value
   * (or in `args`) is replaced by the service's port. */
  env?: Record<string, string>;
  /** Extra command-line words for Node and Deno (after `serve-dev` / `serve`). */
  args?: string[];
  /** Health path polled until the service answers (or exits: there is no other deadline than the
   * hook's own timeout). */
  healthPath?: string;
  /** workerd: the `--persist-to` directory (default: a fresh one per start, removed when the process
   * ends: a port used again by a later file must not find that file's sessions). Starting again with
   * the same directory finds the Durable Object storage and R2 contents the last process left. */
  persistTo?: string;
  /** Deno: serve this module (`export default { fetch }`) with `deno serve`, configured by `env`
   * alone, instead of the service's command line (the IdP's edge entry, apps/idp/entries/edge.ts). */
  serveModule?: string;
  /** workerd: this environment of wrangler.toml (default: the service's name). */
  wranglerEnv?: string;
  /** workerd: these wrangler configs (`-c` each, the first the served Worker) instead of
   * `--env <service>` in wrangler.toml, for Workers reached through service bindings. `{port}`
   * in them is replaced too (in copies beside them, removed when the process ends). */
  wranglerConfigs?: string[];
}

export interface RunningService {
  runtime: RuntimeName;
  baseUrl: string;
  port: number;
  /** Everything the process printed so far (for assertions on logs and for failure reports). */
  output(): string;
  stop(): Promise<void>;
  /** Ends the process at once with SIGKILL (a crash: no shutdown hooks run). */
  kill(): Promise<void>;
}

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export function currentRuntime(): RuntimeName {
  const name = process.env.TEST_RUNTIME ?? "node";
  if (name !== "node" && name !== "deno" && name !== "workerd") throw new Error(`unknown TEST_RUNTIME ${name}`);
  return name;
}

/**
 * A loopback port that is free now, for a child process to bind a moment later. Chosen below the
 * kernel's ephemeral range: a port that `listen(0)` handed out and that was released again can be
 * taken in between as the local port of any outgoing connection (CI once saw wrangler fail with
 * "Address already in use" that way); a port below the range is only ever taken by a deliberate
 * bind. Falls back to the kernel's choice where the range cannot be read.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralRangeStart();
  if (below > LOWEST_PORT + 1000) {
    for (let i = 0; i < 50; i++) {
      // Leaves room for port + 1 (freePortPair).
      const port = await tryBind(LOWEST_PORT + Math.floor(Math.random() * (below - LOWEST_PORT - 2)));
      if (port !== undefined) return port;
    }
  }
  const port = await tryBind(0);
  if (port === undefined) throw new Error("no free loopback port");
  return port;
}

const LOWEST_PORT = 10_000;

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 0;
  } catch {
    return 0;
  }
}

/** Binds `port` on loopback (0: the kernel's choice) and releases it: the port, or undefined if it was taken. */
function tryBind(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

const COMMAND: Record<ServiceName, string> = { idp: "serve-dev", sessions: "serve", routes: "serve" };
/** The route host has no health path of its own: its scripts' `/` is polled unless told otherwise. */
const HEALTH: Record<ServiceName, string> = { idp: "/healthz", sessions: "/api/v1/health", routes: "/" };

/**
 * The provider's nine signing keys (five of them RSA-2048), made once for the tests
 * (test/fixtures/idp-signing-keys.json) and given to every provider a suite starts as
 * `IDP_SIGNING_KEYS`: generating them took about 1 s of CPU at each of the ~300 starts of a run,
 * a quarter of the whole suite's. A suite that needs generated keys (rotation, keys kept across a
 * restart, instances racing to store them) sets `IDP_SIGNING_KEYS: ""`, which the provider reads
 * as unset.
 */
const TEST_SIGNING_KEYS = JSON.stringify(JSON.parse(readFileSync(new URL("../fixtures/idp-signing-keys.json", import.meta.url), "utf8")));

function withTestKeys(service: ServiceName, options: StartOptions): StartOptions {
  if (service !== "idp" || options.env?.IDP_SIGNING_KEYS !== undefined) return options;
  return { ...options, env: { ...options.env, IDP_SIGNING_KEYS: TEST_SIGNING_KEYS } };
}

/** `{port}` in a setting or argument is the port the service gets (known only at launch). */
function withPort(options: StartOptions, port: number): StartOptions {
  const put = (text: string) => text.replaceAll("{port}", String(port));
  return {
    ...options,
    args: options.args?.map(put),
    env: options.env && Object.fromEntries(Object.entries(options.env).map(([k, v]) => [k, put(v)])),
  };
}

/** What wrangler's build step for [env.routes] reads: the script, its policy file (none for a
 * test's own script unless named; the default is the notes example's) and its assets modules. */
function routesBuildEnv(env: Record<string, string> | undefined, port: number): Record<string, string> {
  // Each Worker its own bundle file, so suites run side by side.
  const out = { ROUTES_BUNDLE_OUT: routesBundlePath(port) };
  if (!env?.ROUTES_SCRIPT) return out;
  return {
    ...out,
    ROUTES_SCRIPT: env.ROUTES_SCRIPT,
    ROUTES_POLICY_FILE: env.ROUTES_POLICY_FILE ?? "",
    ...(env.ROUTES_ASSETS ? { ROUTES_ASSETS: env.ROUTES_ASSETS } : {}),
  };
}

/**
 * A config's custom build step (`[build]` or `[env.<name>.build]` with its `command`), run here
 * before wrangler starts, and the config without it. Left to wrangler, the step runs a second time
 * once wrangler's file watcher is ready, and the rewritten bundle restarted the Worker under a
 * running test.
 */
async function prebuilt(config: string, env: Record<string, string>): Promise<string> {
  // The whole table: its header, then comment and key lines (`watch_dir`, `command`, ...).
  const build = /^\[(?:env\.[\w-]+\.)?build\]\n(?:(?:#.*|[\w-]+ = .*)\n)*/m.exec(config);
  const line = build && /^command = "((?:[^"\\]|\\.)*)"$/m.exec(build[0]);
  if (!build || !line) return config;
  const command = JSON.parse(`"${line[1]}"`) as string;
  const built = await runToEnd("sh", ["-c", command], { cwd: ROOT, env: { ...process.env, ...env } });
  if (built.code !== 0) throw new Error(`build step failed (${built.code}): ${command}\n${built.stdout}${built.stderr}`);
  return config.replace(build[0], "");
}

const routesBundlePath = (port: number) => `.wrangler/routes/test-${port}.json`;
const routesConfigPath = (port: number) => `.wrangler-routes-${port}.toml`;

/** A copy of a wrangler config with `{port}` replaced and its build step done, beside it (its
 * paths are relative to it). */
async function writeConfigCopy(config: string, port: number): Promise<string> {
  const copy = config.replace(/([^/]+)\.toml$/, `.$1-${port}.toml`); // idp.toml -> .idp-<port>.toml
  writeFileSync(join(ROOT, copy), await prebuilt(readFileSync(join(ROOT, config), "utf8").replaceAll("{port}", String(port)), {}));
  return copy;
}

/** wrangler.toml with this Worker's own bundle file (`wrangler dev` takes no --alias), built for
 * its script. It sits beside wrangler.toml, since a config's paths are relative to where it is. */
async function writeRoutesConfig(port: number, env: Record<string, string> | undefined): Promise<void> {
  const text = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const line = `"routes-bundle" = "./.wrangler/routes/bundle.json"`;
  if (!text.includes(line)) throw new Error(`wrangler.toml has no line ${line}`);
  const own = text.replace(line, `"routes-bundle" = "./${routesBundlePath(port)}"`);
  writeFileSync(join(ROOT, routesConfigPath(port)), await prebuilt(own, routesBuildEnv(env, port)));
}

function command(runtime: RuntimeName, service: ServiceName, port: number, options: StartOptions): string[] {
  const serveArgs = [COMMAND[service], "--addr", `127.0.0.1:${port}`, ...(options.args ?? [])];
  switch (runtime) {
    case "node":
      // As `npm run idp` / `npm run sessions` start it: a cached bundle, or tsx where it cannot be bundled.
      return [process.execPath, "lib/adapters/node/run.mjs", `apps/${service}/entries/node.ts`, ...serveArgs];
    case "deno":
      if (options.serveModule) return ["node_modules/deno/deno", "serve", "-A", "--host", "127.0.0.1", "--port", String(port), options.serveModule];
      return ["node_modules/deno/deno", "run", "-A", `apps/${service}/entries/deno.ts`, ...serveArgs];
    case "workerd": {
      const vars = Object.entries(options.env ?? {})
        .filter(([k]) => k !== "ROUTES_SCRIPT" && k !== "ROUTES_POLICY_FILE")
        .flatMap(([k, v]) => ["--var", `${k}:${v}`]);
      return [
        process.execPath,
        "node_modules/wrangler/bin/wrangler.js",
        "dev",
        ...(options.wranglerConfigs ? options.wranglerConfigs.flatMap((c) => ["-c", c]) : ["--env", options.wranglerEnv ?? service]),
        ...(service === "routes" && !options.wranglerConfigs ? ["-c", routesConfigPath(port)] : []),
        "--ip",
        "127.0.0.1",
        "--port",
        String(port),
        "--inspector-port",
        String(port + 1),
        "--persist-to",
        options.persistTo!,
        "--log-level",
        process.env.TEST_WRANGLER_LOG ?? "warn",
        "--show-interactive-dev-session=false",
        ...vars,
      ];
    }
  }
}

export async function startService(
  service: ServiceName,
  options: StartOptions = {},
  runtime: RuntimeName = currentRuntime(),
): Promise<RunningService> {
  // Another process can still bind the chosen port first (see freePort): then a new port.
  for (let attempt = 1;; attempt++) {
    try {
      return await launch(service, options, runtime);
    } catch (err) {
      if (attempt === 3 || !/Address already in use|EADDRINUSE/.test((err as Error).message)) throw err;
    }
  }
}

async function launch(service: ServiceName, options: StartOptions, runtime: RuntimeName): Promise<RunningService> {
  // workerd wants two ports (server and inspector); keep them apart from other free ports.
  const port = runtime === "workerd" ? await freePortPair() : await freePort();
  options = withPort(withTestKeys(service, options), port);
  const ownRoutesConfig = runtime === "workerd" && service === "routes" && !options.wranglerConfigs;
  const configCopies: string[] = [];
  const ownState = runtime === "workerd" && !options.persistTo ? `.wrangler/test-state/${service}-${port}-${crypto.randomUUID()}` : undefined;
  if (ownState) options = { ...options, persistTo: ownState };
  const removeCopies = () => {
    if (ownState) rmSync(join(ROOT, ownState), { recursive: true, force: true });
    if (ownRoutesConfig) {
      rmSync(join(ROOT, routesConfigPath(port)), { force: true });
      rmSync(join(ROOT, routesBundlePath(port)), { force: true });
    }
    for (const copy of configCopies) rmSync(join(ROOT, copy), { force: true });
  };
  try {
    if (ownRoutesConfig) await writeRoutesConfig(port, options.env);
    if (runtime === "workerd" && options.wranglerConfigs) {
      for (const config of options.wranglerConfigs) configCopies.push(await writeConfigCopy(config, port));
      options = { ...options, wranglerConfigs: configCopies };
    }
  } catch (err) {
    removeCopies();
    throw err;
  }
  const [bin, ...args] = command(runtime, service, port, options);
  const proc = startProcess(bin!, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      // On workerd the settings are vars.
      ...(runtime !== "workerd" ? options.env : {}),
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      WRANGLER_HIDE_BANNER: "true",
      NO_COLOR: "1",
    },
  });
  void proc.exit.then(removeCopies);
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(proc, () => answersOk(baseUrl + (options.healthPath ?? HEALTH[service])), `${service} on ${runtime}`);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { runtime, baseUrl, port, output: proc.output, stop: () => proc.stop(), kill: () => proc.stop("SIGKILL") };
}

async function freePortPair(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    if (port < 65000 && (await tryBind(port + 1)) !== undefined) return port;
  }
  throw new Error("no free port pair");
}
