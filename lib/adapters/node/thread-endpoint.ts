/**
 * Inside a Node worker thread: the channel to the parent (see lib/sandbox-host/threads.ts). Apart from the
 * spawning side (node-threads.ts) so a thread entry's module graph has no `import.meta`, which
 * bundling could not keep (bundle.mjs).
 */
import { parentPort } from "node:worker_threads";
import type { ThreadEndpoint } from "#lib/sandbox-host";

export function nodeThreadEndpoint<In, Out>(): ThreadEndpoint<In, Out> {
  const port = parentPort;
  if (!port) throw new Error("nodeThreadEndpoint: not running in a worker thread");
  return {
    post: (message) => port.postMessage(message),
    listen: (onMessage) => void port.on("message", onMessage),
  };
}
