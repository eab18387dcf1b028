/** Threads on Node: spawning worker_threads (see lib/sandbox-host/threads.ts; the thread's end is node/thread-endpoint.ts). */
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import type { SpawnThread, ThreadPort } from "#lib/sandbox-host";
import { bundledEntry } from "./bundle.mjs";

const BOOT = new URL("./thread-boot.mjs", import.meta.url);

const bundles = new Map<string, URL | undefined>();

/**
 * A `.ts` entry as a cached esbuild bundle (node-bundle.mjs), so the thread needs no TypeScript
 * loader: registering tsx in a thread gives it a module-hooks thread of its own (another V8
 * isolate: ~27 MiB of RSS per thread, measured). Looked up once per process, so every thread of a
 * process runs the same code even if the sources change meanwhile; made again if another process
 * removed it. Undefined when it cannot be bundled: the thread then registers tsx
 * (node-thread-boot.mjs).
 */
function bundled(entry: URL): URL | undefined {
  const known = bundles.get(entry.href);
  if (bundles.has(entry.href) && (known === undefined || existsSync(known))) return known;
  const file = bundledEntry(entry);
  bundles.set(entry.href, file);
  return file;
}

/**
 * The threads' flags: none, except `--cpu-prof` into the directory ROUTES_THREAD_PROF_DIR names
 * when it is set (to profile the threads: each writes its .cpuprofile when it exits).
 */
function threadExecArgv(): string[] {
  const dir = process.env.ROUTES_THREAD_PROF_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

interface NodeThreadSpawnerOptions {
  /**
   * Start one thread now, before anything asks for it: the first `spawn()` gets it. Its boot then
   * overlaps whatever the process loads meanwhile (the route host's cold start). It does not keep
   * the process alive until it is handed out.
   */
  startOne?: boolean;
}

type NodePort<In, Out> = ThreadPort<In, Out> & { ref(): void; unref(): void };

/**
 * Spawns threads running the module `entry`. A `.ts` entry runs as an esbuild bundle when it can
 * (see `bundled`), else with tsx registered in the thread first, so it works the same under
 * `tsx`, `node --import tsx` and test runners. The thread starts with no execArgv of the parent:
 * it loads only what its entry imports.
 */
export function nodeThreadSpawner<In, Out>(entry: URL, options: NodeThreadSpawnerOptions = {}): SpawnThread<In, Out> {
  const start = (): NodePort<In, Out> => {
    const bundle = entry.pathname.endsWith(".ts") ? bundled(entry) : entry;
    const execArgv = threadExecArgv();
    const worker = bundle ? new Worker(bundle, { execArgv }) : new Worker(BOOT, { execArgv, workerData: { entry: entry.href } });
    let terminated = false;
    let lastError = "";
    // Watched from the start: a thread that dies before anyone listens still reports it.
    let exitedWith: string | undefined;
    let onExitNow: ((reason: string) => void) | undefined;
    worker.on("error", (err) => (lastError = err instanceof Error ? `${err.name}: ${err.message}` : String(err)));
    worker.once("exit", (code) => {
      exitedWith = lastError || `exit code ${code}`;
      if (!terminated) onExitNow?.(exitedWith);
    });
    return {
      post: (message) => worker.postMessage(message),
      listen(onMessage, onExit) {
        worker.on("message", onMessage);
        onExitNow = onExit;
        if (exitedWith !== undefined && !terminated) queueMicrotask(() => onExit(exitedWith!));
      },
      terminate() {
        terminated = true;
        void worker.terminate();
      },
      ref: () => worker.ref(),
      unref: () => worker.unref(),
    };
  };
  let first: NodePort<In, Out> | undefined;
  if (options.startOne) {
    first = start();
    first.unref();
  }
  return () => {
    const port = first;
    if (!port) return start();
    first = undefined;
    port.ref();
    return port;
  };
}
