/**
 * What a command line needs from the runtime it runs on. `lib/adapters/node/index.ts` and
 * `lib/adapters/deno/index.ts` implement it; the CLIs and apps take it as a parameter, so they import no
 * runtime module themselves.
 */
export interface ServeEnv {
  /** The peer address of the socket, as the runtime saw it. */
  clientAddress?: string;
  /**
   * The request id. An adapter that has chosen it and set `X-Request-Id` on its native response
   * itself passes it in (lib/http/request-id.ts then only uses it); otherwise `withRequestId`
   * chooses it, so handlers always find it here.
   */
  requestId?: string;
  /** Set by the route host for a handler it mounted: the prefix it is mounted at ("/idp"). */
  mountPrefix?: string;
  /** Set with `mountPrefix`: whether the prefix was removed from the path the handler gets. */
  mountStripped?: boolean;
  /**
   * The request's header lines as received, name and value alternating (Node's `rawHeaders`): on
   * @hono/node-server, iterating `request.headers` first builds a whole web Headers object, which
   * costs the route host ~7 µs a request (bench/routes.bench.ts). Only the Node adapter sets it.
   */
  rawHeaders?: readonly string[];
  /**
   * The request's body as the runtime received it (Node's IncomingMessage): on @hono/node-server,
   * touching `request.body` first builds a whole web Request. Read this instead, or the request,
   * never both. Only the Node adapter sets it.
   */
  body?: AsyncIterable<Uint8Array>;
}

export type FetchHandler = (request: Request, env: ServeEnv) => Response | Promise<Response>;

export interface ListenAddress {
  hostname: string;
  port: number;
}

export interface RunningServer {
  hostname: string;
  port: number;
  close(): Promise<void>;
}

export interface ProcessMemory {
  rss: number;
  heapUsed: number;
}

export interface HostRuntime {
  readonly name: "node" | "deno";
  /** Command-line arguments after the script name. */
  readonly args: string[];
  readonly env: Record<string, string | undefined>;
  cwd(): string;
  /** Reads a UTF-8 file; resolves `undefined` when it does not exist. */
  readTextFile(path: string): Promise<string | undefined>;
  /** Creates a directory and its parents. */
  ensureDir(path: string): Promise<void>;
  resolvePath(...segments: string[]): string;
  serve(fetch: FetchHandler, address: ListenAddress): Promise<RunningServer>;
  /** Runs `fn` once on SIGINT/SIGTERM, then exits. */
  onShutdown(fn: () => Promise<void> | void): void;
  /** Whether stdout is a terminal (a person is watching), not a pipe or a file. */
  readonly terminal: boolean;
  /** This process's memory: resident set (all threads) and the main JavaScript heap in use. */
  memoryUsage(): ProcessMemory;
  /** Writes a line to stdout / stderr without a logger around it (CLI output). */
  print(line: string): void;
  printError(line: string): void;
  exit(code: number): never;
}

/** Parses `host:port`, `:port` or `[::1]:port`. */
export function parseListenAddress(value: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`invalid address "${value}": expected host:port`);
  return { hostname: m[1] ?? (m[2] || "127.0.0.1"), port };
}

/**
 * The hooks behind `HostRuntime.onShutdown`: run once, in the order added, then exit. `listen`
 * is called with the runner when the first hook is added (the adapter subscribes to signals).
 */
export function shutdownSequence(listen: (run: () => Promise<void>) => void, exit: (code: number) => void) {
  const hooks: (() => Promise<void> | void)[] = [];
  let started = false;
  const run = async () => {
    if (started) return;
    started = true;
    for (const fn of hooks) await fn();
    exit(0);
  };
  return {
    add(fn: () => Promise<void> | void): void {
      if (hooks.length === 0) listen(run);
      hooks.push(fn);
    },
  };
}
