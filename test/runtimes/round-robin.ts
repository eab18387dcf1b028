/**
 * A loopback reverse proxy that sends each request to the next of its targets in turn, as a load
 * balancer in front of several instances would. The Host header passes through unchanged, so
 * instances that take their issuer from the request origin all see the proxy's origin.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from "node:http";

export interface RoundRobin {
  port: number;
  baseUrl: string;
  /** How many requests each target got. */
  counts(): number[];
  close(): Promise<void>;
}

export async function startRoundRobin(targetPorts: number[]): Promise<RoundRobin> {
  const agent = new Agent({ keepAlive: true });
  const counts = targetPorts.map(() => 0);
  let next = 0;
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const i = next++ % targetPorts.length;
    counts[i]!++;
    const upstream = request(
      { host: "127.0.0.1", port: targetPorts[i], method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`round-robin proxy: ${err.message}`);
    });
    req.pipe(upstream);
  };
  const server = createServer(forward);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    counts: () => [...counts],
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
