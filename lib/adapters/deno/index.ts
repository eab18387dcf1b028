/** HostRuntime for Deno: Deno.serve for sockets, Deno's file API for files. */
import { type HostRuntime, shutdownSequence } from "#lib/runtime";

// Deno's types are not part of this TypeScript project; this is the slice used here.
declare const Deno: {
  args: string[];
  env: { toObject(): Record<string, string> };
  cwd(): string;
  readTextFile(path: string): Promise<string>;
  mkdir(path: string, options: { recursive: boolean }): Promise<void>;
  errors: { NotFound: new () => Error };
  serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
    handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { shutdown(): Promise<void>; addr: { port: number } };
  addSignalListener(signal: string, fn: () => void): void;
  stdout: { writeSync(data: Uint8Array): number; isTerminal(): boolean };
  memoryUsage(): { rss: number; heapUsed: number };
  stderr: { writeSync(data: Uint8Array): number };
  exit(code: number): never;
};

function isAbsolute(path: string) {
  return path.startsWith("/");
}

function normalize(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return "/" + out.join("/");
}

export function denoRuntime(): HostRuntime {
  const encoder = new TextEncoder();
  const shutdown = shutdownSequence(
    (run) => {
      Deno.addSignalListener("SIGINT", run);
      Deno.addSignalListener("SIGTERM", run);
    },
    (code) => Deno.exit(code),
  );
  const resolvePath = (...segments: string[]) => normalize(segments.reduce((acc, s) => (isAbsolute(s) ? s : `${acc}/${s}`), Deno.cwd()));
  return {
    name: "deno",
    args: Deno.args,
    env: Deno.env.toObject(),
    cwd: () => Deno.cwd(),
    async readTextFile(path) {
      try {
        return await Deno.readTextFile(path);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return undefined;
        throw err;
      }
    },
    async ensureDir(path) {
      await Deno.mkdir(path, { recursive: true });
    },
    resolvePath,
    serve(fetch, address) {
      return new Promise((resolveServer) => {
        const server = Deno.serve(
          {
            hostname: address.hostname,
            port: address.port,
            onListen: ({ port }) => resolveServer({ hostname: address.hostname, port, close: () => server.shutdown() }),
          },
          (req, info) => fetch(req, { clientAddress: info.remoteAddr.hostname }),
        );
      });
    },
    onShutdown: (fn) => shutdown.add(fn),
    terminal: Deno.stdout.isTerminal(),
    memoryUsage: () => Deno.memoryUsage(),
    print: (line) => void Deno.stdout.writeSync(encoder.encode(line + "\n")),
    printError: (line) => void Deno.stderr.writeSync(encoder.encode(line + "\n")),
    exit: (code) => Deno.exit(code),
  };
}
