/** Threads on Node: worker_threads, both ends (see lib/threads.ts). */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { parentPort, Worker } from "node:worker_threads";
import type { SpawnThread, ThreadEndpoint } from "../threads.ts";

const BOOT = new URL("./node-thread-boot.mjs", import.meta.url);
/** Bundled thread entries live inside the project, so their package imports resolve from its
 * node_modules. */
const BUNDLES = new URL("../../node_modules/.cache/thread-entries/", import.meta.url);
/** Older bundles of an entry (its sources changed since) are removed after this long. */
const STALE_MS = 10 * 60_000;

const bundles = new Map<string, URL | undefined>();

/**
 * A `.ts` entry bundled by esbuild into one plain ES module (package imports stay imports), so the
 * thread needs no TypeScript loader. Registering tsx in a thread gives it a module-hooks thread of
 * its own (another V8 isolate: ~27 MiB of RSS per thread, measured); a bundle costs nothing of the
 * kind. The bundle is named by its content hash and made once per process. Undefined when esbuild
 * is missing or the cache cannot be written: the thread then registers tsx (node-thread-boot.mjs).
 */
function bundled(entry: URL): URL | undefined {
  // A bundle another process removed as stale (its sources changed) is made again, so a thread
  // replaced late in a long-lived server still starts.
  const known = bundles.get(entry.href);
  if (bundles.has(entry.href) && (known === undefined || existsSync(known))) return known;
  let file: URL | undefined;
  try {
    const esbuild = createRequire(import.meta.url)("esbuild") as typeof import("esbuild");
    const out = esbuild.buildSync({
      entryPoints: [fileURLToPath(entry)],
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      write: false,
      logLevel: "silent",
    });
    const code = out.outputFiles[0]!.text;
    const name = basename(fileURLToPath(entry)).replace(/\.ts$/, "");
    file = new URL(`${name}-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`, BUNDLES);
    if (!existsSync(file)) {
      mkdirSync(BUNDLES, { recursive: true });
      for (const old of readdirSync(BUNDLES)) {
        const path = new URL(old, BUNDLES);
        if (old.startsWith(`${name}-`) && Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
      }
      // Written aside and renamed: another process may be reading the same name.
      const temp = new URL(`${basename(fileURLToPath(file))}.${process.pid}.tmp`, BUNDLES);
      writeFileSync(temp, code);
      renameSync(temp, file);
    }
  } catch {
    file = undefined;
  }
  bundles.set(entry.href, file);
  return file;
}

/**
 * Spawns threads running the module `entry`. A `.ts` entry runs as an esbuild bundle when it can
 * (see `bundled`), else with tsx registered in the thread first, so it works the same under
 * `tsx`, `node --import tsx` and test runners. The thread starts with no execArgv of the parent:
 * it loads only what its entry imports.
 */
export function nodeThreadSpawner<In, Out>(entry: URL): SpawnThread<In, Out> {
  return () => {
    const bundle = entry.pathname.endsWith(".ts") ? bundled(entry) : entry;
    const worker = bundle ? new Worker(bundle, { execArgv: [] }) : new Worker(BOOT, { execArgv: [], workerData: { entry: entry.href } });
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
