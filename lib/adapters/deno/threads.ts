/** Threads on Deno: Web Workers (`type: "module"`), both ends (see lib/sandbox-host/threads.ts). */
import type { SpawnThread, ThreadEndpoint } from "#lib/sandbox-host";

/** Spawns Web Workers running the module `entry` (Deno runs TypeScript and inherits permissions). */
export function denoThreadSpawner<In, Out>(entry: URL): SpawnThread<In, Out> {
  return () => {
    const worker = new Worker(entry.href, { type: "module" });
    let gone = false;
    return {
      post: (message) => worker.postMessage(message),
      listen(onMessage, onExit) {
        worker.onmessage = (e: MessageEvent) => onMessage(e.data as Out);
        const fail = (reason: string) => {
          if (gone) return;
          gone = true;
          worker.terminate();
          onExit(reason);
        };
        // An uncaught error ends the worker; preventDefault keeps it from ending this thread too.
        worker.onerror = (e: ErrorEvent) => {
          e.preventDefault();
          fail(e.message || "uncaught error");
        };
        worker.onmessageerror = () => fail("a message could not be read");
      },
      terminate() {
        gone = true;
        worker.terminate();
      },
    };
  };
}

/** Inside a worker: the channel to the parent. */
export function denoThreadEndpoint<In, Out>(): ThreadEndpoint<In, Out> {
  const scope = globalThis as unknown as { postMessage(message: unknown): void; onmessage: ((e: MessageEvent) => void) | null };
  return {
    post: (message) => scope.postMessage(message),
    listen: (onMessage) => void (scope.onmessage = (e) => onMessage(e.data as In)),
  };
}
