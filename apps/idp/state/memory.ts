/** In-memory IdpStateStore (Node, Deno, tests): one insertion-ordered Map per kind. */
import { STATE_KINDS, type IdpStateStore, type StateKind } from "./store.ts";

interface Entry {
  value: unknown;
  pruneAt: number;
}

/** Hooks a persistent store uses to mirror every change (see durable.ts). */
export interface StoreMirror {
  set(kind: StateKind, key: string, value: unknown, pruneAt: number): void;
  delete(kind: StateKind, key: string): void;
  clear(kinds: readonly StateKind[]): void;
  prune(now: number): void;
}

export class MemoryStateStore implements IdpStateStore {
  private readonly maps = new Map<StateKind, Map<string, Entry>>(STATE_KINDS.map((k) => [k, new Map()]));
  private lastFullSweep = -Infinity;

  constructor(private readonly mirror?: StoreMirror) {}

  private map(kind: StateKind): Map<string, Entry> {
    return this.maps.get(kind)!;
  }

  get<T>(kind: StateKind, key: string): T | undefined {
    return this.map(kind).get(key)?.value as T | undefined;
  }

  set<T>(kind: StateKind, key: string, value: T, pruneAt = Infinity): void {
    this.map(kind).set(key, { value, pruneAt });
    this.mirror?.set(kind, key, value, pruneAt);
  }

  /** Loads a record without mirroring it (used when restoring from persistent storage). */
  restore(kind: StateKind, key: string, value: unknown, pruneAt: number): void {
    this.map(kind).set(key, { value, pruneAt });
  }

  delete(kind: StateKind, key: string): void {
    if (this.map(kind).delete(key)) this.mirror?.delete(kind, key);
  }

  entries<T>(kind: StateKind): [string, T][] {
    return [...this.map(kind)].map(([k, e]) => [k, e.value as T]);
  }

  count(kind: StateKind): number {
    return this.map(kind).size;
  }

  clear(kinds: readonly StateKind[]): void {
    for (const k of kinds) this.map(k).clear();
    this.mirror?.clear(kinds);
  }

  trimOldest(kind: StateKind, max: number): number {
    const map = this.map(kind);
    let dropped = 0;
    for (const key of map.keys()) {
      if (map.size <= max) break;
      map.delete(key);
      this.mirror?.delete(kind, key);
      dropped++;
    }
    return dropped;
  }

  /**
   * Within a kind records are mostly inserted in prune-time order (fixed lifetimes, a clock that
   * only moves forward), so each kind is trimmed from its oldest end until a live record: cost in
   * proportion to what is dropped. A full sweep now and then (a minute of provider time) catches
   * the few records that are out of order.
   */
  prune(now: number): void {
    const full = now - this.lastFullSweep >= 60_000;
    if (full) this.lastFullSweep = now;
    for (const map of this.maps.values()) {
      for (const [key, entry] of map) {
        if (entry.pruneAt <= now) map.delete(key);
        else if (!full) break;
      }
    }
    this.mirror?.prune(now);
  }
}
