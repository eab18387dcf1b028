/**
 * The sandbox side of an app: what runs where its sandboxes live, on a thread of the pool
 * (`serveSandboxThread`) or on the calling thread (`inProcessSide`). An app writes it once, as a
 * function of a QuickJS engine and its init data, and keeps only its protocol (what crosses):
 * the route host loads a script and dispatches handlers, the session service opens sessions and
 * runs executions.
 */
import { loadQuickJS, type SandboxEngine } from "#lib/sandbox";
import { type PoolMessage, type PoolReply, serveThreadCalls } from "./pool.ts";
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

export interface SandboxThreadOptions {
  /** Calls run one after another (the host may post the next before this one is answered), so a
   * question asked during a call belongs to that call. Default false: calls interleave at awaits. */
  oneAtATime?: boolean;
}

/** One call after another: each starts when the one before has settled (at once when none is
 * running: no turn of the microtask queue, no closure to chain). */
export function serialized<Req, Res, Ev>(side: SandboxSide<Req, Res, Ev>): SandboxSide<Req, Res, Ev> {
  let queue: Promise<unknown> = Promise.resolve();
  /** Calls started or waiting that have not settled. */
  let active = 0;
  const settled = () => void active--;
  const start = (req: Req, emit: (event: Ev) => void, ask: AskHost): Promise<Res> => {
    try {
      return side.handle(req, emit, ask);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return {
    handle(req, emit, ask) {
      const turn = active === 0 ? start(req, emit, ask) : queue.then(() => start(req, emit, ask));
      active++;
      queue = turn.then(settled, settled);
      return turn;
    },
  };
}

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
      const opened = await open(await loadQuickJS({ maxHeapMb: init.maxHeapMb }), init);
      side = options.oneAtATime ? serialized(opened) : opened;
    },
    handle: (req, emit, ask) => side.handle(req, emit, ask),
  });
}
