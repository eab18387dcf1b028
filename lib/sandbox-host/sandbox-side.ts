/**
 * The sandbox side of an app: what runs where its sandboxes live, on a thread of the pool
 * (`serveSandboxThread`) or on the calling thread (the app calls it directly). An app writes it once, as a
 * function of a QuickJS engine and its init data, and keeps only its protocol (what crosses):
 * the route host loads a script and dispatches handlers, the session service opens sessions and
 * runs executions.
 */
import { loadQuickJS, type SandboxEngine } from "#lib/sandbox";
import { type PoolMessage, type PoolReply, serveThreadCalls, type ServeThreadOptions } from "./pool.ts";
import type { ThreadEndpoint } from "./threads.ts";

/** Puts a question to the host while a call runs (a service call, a database read). */
export type AskHost = (question: unknown) => Promise<unknown>;

export interface SandboxSide<Req, Res, Ev> {
  /** One call; `emit` streams events back while it runs, `ask` reaches the host. A thrown error
   * with a string `code` crosses with that code. */
  handle(req: Req, emit: (event: Ev) => void, ask: AskHost): Promise<Res>;
  /** Frees the side's sandboxes (in process: a thread frees everything when it ends). */
  close?(): void;
}

export type OpenSandboxSide<Init, Req, Res, Ev> = (engine: SandboxEngine, init: Init) => SandboxSide<Req, Res, Ev> | Promise<SandboxSide<Req, Res, Ev>>;

/** Every thread's init carries the hard cap of its QuickJS heap. */
export interface SandboxThreadInit {
  maxHeapMb: number;
}

export type SandboxThreadOptions = ServeThreadOptions;

/**
 * The thread entry: loads this thread's own QuickJS engine (with the heap cap from `init`), opens
 * the app's side on it and answers the pool's calls. The app's thread file only supplies the
 * endpoint (lib/adapters/*-threads.ts) and whatever cannot be copied from the main thread.
 */
export function serveSandboxThread<Init extends SandboxThreadInit, Req, Res, Ev>(
  endpoint: ThreadEndpoint<PoolMessage<Init, Req>, PoolReply<Res, Ev>>,
  open: OpenSandboxSide<Init, Req, Res, Ev>,
  options: SandboxThreadOptions = {},
): void {
  let side: SandboxSide<Req, Res, Ev>;
  serveThreadCalls(endpoint, {
    async init(init) {
      side = await open(await loadQuickJS({ maxHeapMb: init.maxHeapMb }), init);
    },
    handle: (req, emit, ask) => side.handle(req, emit, ask),
  }, options);
}
