/**
 * A side's sandboxes: up to `max` of them, opened lazily, each running one call at a time. A call
 * takes a free one (the most recently used: it stays warm), and while all are in use, another is
 * opened for it, up to `max`. So calls that only wait (a timer, a host call) hold a sandbox each
 * but not the thread, and the next call runs beside them. Sandboxes left unused for `idleMs` are
 * closed, all but one, when the set is next touched (no timer: workerd runs none outside a
 * request), so memory follows the load back down.
 *
 * How a caller waits depends on where the calls come from:
 * - `handOff` (a thread, where calls come in batches): it queues, first come first served, and a
 *   sandbox released goes to it at once. Another is opened for it only if it is still waiting a
 *   turn of the event loop later: a sandbox whose handler ran to its end is released within the
 *   turn, one whose handler waits is not, and only those need company.
 * - otherwise (in process, on workerd): it opens another at once, and past `max` looks again every
 *   `pollMs` on a timer of its own. On workerd a request waiting only on another request's promise
 *   looks hung and is cancelled, and a sandbox handed to it would be lost.
 */

export interface SandboxSetOptions<T> {
  open: () => Promise<T>;
  close: (item: T) => void;
  /** At most this many open at once (at least 1). */
  max: number;
  /** A free sandbox unused this long is closed, unless it is the last (default 10 s). */
  idleMs?: number;
  /** The clock for `idleMs` (ms). */
  now?: () => number;
  /** Callers wait in line and get the sandbox released next (above). */
  handOff?: boolean;
  /** How often a caller past `max` looks for a free sandbox, without `handOff` (default 2 ms). */
  pollMs?: number;
}

export interface SandboxSet<T> {
  /** A free sandbox now, or undefined (then `acquire`): the hot path makes no promise. */
  take(): T | undefined;
  /** A free sandbox, else one released or opened for this caller (above). */
  acquire(): Promise<T>;
  /** Gives a sandbox back after its call. */
  release(item: T): void;
  /** Closes a sandbox taken from the set (broken, or loaded with a script since replaced); its
   * place goes to the next caller. */
  discard(item: T): void;
  /** Puts an opened sandbox in the set as free (a reload's first one): closed at once when full. */
  add(item: T): void;
  /** Closes the free sandboxes (a reload: the ones in use are discarded by their callers). */
  closeFree(): void;
  /** Sandboxes open, free or in use. */
  readonly size: number;
}

export const SANDBOX_IDLE_MS = 10_000;

/** After this turn's I/O callbacks (Node's setImmediate; a zero timeout where there is none). */
const nextTurn = (fn: () => void): void => void (typeof setImmediate === "function" ? setImmediate(fn) : setTimeout(fn, 0));

export function createSandboxSet<T>(options: SandboxSetOptions<T>): SandboxSet<T> {
  const max = Math.max(1, options.max);
  const idleMs = options.idleMs ?? SANDBOX_IDLE_MS;
  const now = options.now ?? (() => performance.now());
  const pollMs = options.pollMs ?? 2;
  /** Free sandboxes, least recently used first, with when each was released. */
  const free: { item: T; at: number }[] = [];
  /** Callers in line (`handOff`). */
  const waiting: { resolve: (item: T) => void; reject: (err: unknown) => void }[] = [];
  let growing = false;
  let size = 0;

  function sweep(): void {
    while (free.length > 1 && now() - free[0]!.at > idleMs) {
      size--;
      options.close(free.shift()!.item);
    }
  }
  async function open(): Promise<T> {
    size++;
    try {
      return await options.open();
    } catch (err) {
      size--;
      throw err;
    }
  }
  function put(item: T): void {
    const waiter = waiting.shift();
    if (waiter) return waiter.resolve(item);
    free.push({ item, at: now() });
    sweep();
  }
  /** A turn from now, opens a sandbox for each caller still in line, up to `max`. */
  function growLater(): void {
    if (growing) return;
    growing = true;
    nextTurn(() => {
      growing = false;
      for (let n = waiting.length; n > 0 && size < max; n--) {
        open().then(put, (err) => waiting.shift()?.reject(err));
      }
    });
  }

  return {
    take: () => free.pop()?.item,
    async acquire() {
      for (;;) {
        const slot = free.pop();
        if (slot) return slot.item;
        if (options.handOff) {
          growLater();
          return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
        }
        if (size < max) return open();
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },
    release: put,
    discard(item) {
      size--;
      options.close(item);
      if (waiting.length > 0) growLater();
    },
    add(item) {
      if (size >= max) return options.close(item);
      size++;
      put(item);
    },
    closeFree() {
      for (const { item } of free.splice(0)) {
        size--;
        options.close(item);
      }
    },
    get size() {
      return size;
    },
  };
}
