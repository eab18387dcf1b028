// First module of every thread spawned by node-threads.ts: Node 20 does not apply the parent's
// TypeScript loader (tsx) to a worker's entry, so a `.ts` entry gets tsx registered here first.
import { workerData } from "node:worker_threads";

const { entry } = workerData;
if (entry.endsWith(".ts")) {
  const { register } = await import("tsx/esm/api");
  register();
}
await import(entry);
