/** Threads on Node: worker_threads, both ends (see lib/threads.ts). */
import { parentPort, Worker } from "node:worker_threads";
import type { SpawnThread, ThreadEndpoint } from "../threads.ts";

const BOOT = new URL("./node-thread-boot.mjs", import.meta.url);

/**
 * Spawns threads running the module `entry` (a `.ts` entry gets tsx registered first, so it
 * works the same under `tsx`, `node --import tsx` and test runners). The thread starts with no
 * execArgv of the parent: it loads only what its entry imports.
 */
export function nodeThreadSpawner<In, Out>(entry: URL): SpawnThread<In, Out> {
  return () => {
    const worker = new Worker(BOOT, { execArgv: [], workerData: { entry: entry.href } });
    let terminated = false;
    let lastError = "";
    return {
      post: (message) => worker.postMessage(message),
      listen(onMessage, onExit) {
        worker.on("message", onMessage);
        worker.on("error", (err) => (lastError = err instanceof Error ? `${err.name}: ${err.message}` : String(err)));
        worker.once("exit", (code) => {
          if (!terminated) onExit(lastError || `exit code ${code}`);
        });
      },
      terminate() {
        terminated = true;
        void worker.terminate();
      },
    };
  };
}

/** Inside a thread: the channel to the parent. */
export function nodeThreadEndpoint<In, Out>(): ThreadEndpoint<In, Out> {
  const port = parentPort;
  if (!port) throw new Error("nodeThreadEndpoint: not running in a worker thread");
  return {
    post: (message) => port.postMessage(message),
    listen: (onMessage) => void port.on("message", onMessage),
  };
}
