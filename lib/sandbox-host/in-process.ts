/**
 * Sandbox sides on the calling thread (workerd, where an isolate is the unit of concurrency; tests;
 * `--threads 0` for debugging): a fixed number of them, each running one call at a time; callers
 * beyond that wait their turn, first come first served.
 */
import type { SandboxSide } from "./sandbox-side.ts";

export interface SideSlot<Req, Res, Ev, S> {
  readonly side: SandboxSide<Req, Res, Ev>;
  /** The owner's bookkeeping (what this side has loaded, say). */
  readonly state: S;
}

export interface InProcessSides<Req, Res, Ev, S> {
  acquire(): Promise<SideSlot<Req, Res, Ev, S>>;
  release(slot: SideSlot<Req, Res, Ev, S>): void;
  /** Closes the sides not in use; one in use is closed when it is released. */
  close(): void;
}

export function inProcessSides<Req, Res, Ev, S>(open: () => SandboxSide<Req, Res, Ev>, count: number, newState: () => S): InProcessSides<Req, Res, Ev, S> {
  const free: SideSlot<Req, Res, Ev, S>[] = [];
  const waiting: ((slot: SideSlot<Req, Res, Ev, S>) => void)[] = [];
  // Sides open on first use: a host that never runs a handler builds none.
  let opened = 0;
  let closed = false;
  return {
    acquire() {
      const slot = free.pop();
      if (slot) return Promise.resolve(slot);
      if (opened < Math.max(1, count)) {
        opened++;
        return Promise.resolve({ side: open(), state: newState() });
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    release(slot) {
      const next = waiting.shift();
      if (next) next(slot);
      else if (closed) slot.side.close?.();
      else free.push(slot);
    },
    close() {
      closed = true;
      for (const slot of free.splice(0)) slot.side.close?.();
    },
  };
}
