/** HostRuntime for Node: @hono/node-server for sockets, node:fs for files. */
import { type Http2Bindings, type HttpBindings, serve } from "@hono/node-server";
import type { AddressInfo, Socket } from "node:net";
import { mkdir, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { chooseRequestId, REQUEST_ID_HEADER } from "#lib/http";
import { type HostRuntime, shutdownSequence } from "#lib/runtime";

export function nodeRuntime(): HostRuntime {
  const shutdown = shutdownSequence(
    (run) => {
      process.once("SIGINT", run);
      process.once("SIGTERM", run);
    },
    (code) => process.exit(code),
  );
  return {
    name: "node",
    args: process.argv.slice(2),
    env: process.env,
    cwd: () => process.cwd(),
    async readTextFile(path) {
      try {
        return await readFile(path, "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
    },
    async ensureDir(path) {
      await mkdir(path, { recursive: true });
    },
    resolvePath: (...segments) => resolve(...segments),
    serve(fetch, address) {
      return new Promise((resolveServer, reject) => {
        const server = serve(
          {
            fetch: (req, { incoming, outgoing }: HttpBindings | Http2Bindings) => {
              // The request id, chosen here by lib/http/request-id.ts's rule and set through
              // node:http's own headers: far cheaper than web Headers (see request-id.ts);
              // @hono/node-server merges it into every response, and the app takes the id from env.
              const requestId = chooseRequestId(incoming.headers["x-request-id"] as string | undefined);
              outgoing.setHeader(REQUEST_ID_HEADER, requestId);
              return fetch(req, { clientAddress: incoming.socket.remoteAddress, requestId, rawHeaders: incoming.rawHeaders, body: incoming });
            },
            hostname: address.hostname,
            port: address.port,
          },
          (info: AddressInfo) =>
            resolveServer({
              hostname: address.hostname,
              port: info.port,
              close: () =>
                new Promise<void>((done) => {
                  // close() ends idle keep-alive connections once; a response still in flight then
                  // leaves its connection open after it is sent, so idle ones are closed until done.
                  const http = server as unknown as { closeIdleConnections?: () => void };
                  const timer = setInterval(() => http.closeIdleConnections?.(), 100);
                  server.close(() => {
                    clearInterval(timer);
                    done();
                  });
                }),
            }),
        );
        server.once("error", reject);
        server.on("connection", (socket: Socket) => (socket.destroySoon = lingeringClose));
      });
    },
    onShutdown: (fn) => shutdown.add(fn),
    terminal: Boolean(process.stdout.isTTY),
    memoryUsage: () => process.memoryUsage(),
    print: (line) => void process.stdout.write(line + "\n"),
    printError: (line) => void process.stderr.write(line + "\n"),
    exit: (code) => process.exit(code),
  };
}

/** How long, and how much, a closing connection is still read from (see `lingeringClose`). */
const LINGER_MS = 2000;
const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * node:http ends a `Connection: close` answer (our 413s) with `socket.destroySoon()`: the socket is
 * closed as soon as the answer is handed to the kernel. A client still sending the body that was
 * refused then meets a socket closed with unread data, so the kernel answers with a reset, which
 * can discard the answer before the client read it (the client sees a reset, never the 413).
 * Instead, as web servers' "lingering close": send the answer and a FIN, then go on reading and
 * discarding what still comes, until the client closes, for at most LINGER_MS and LINGER_BYTES.
 */
function lingeringClose(this: Socket): void {
  if (this.destroyed) return;
  this.end();
  let discarded = 0;
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  timer.unref();
  this.once("close", () => clearTimeout(timer));
  this.once("end", () => this.destroy());
  this.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) this.destroy();
  });
  this.resume();
}
