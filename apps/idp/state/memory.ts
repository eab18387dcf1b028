/**
 * In-memory IdpStateStore (the default for `serve-dev`, and tests): one insertion-ordered Map per
 * kind. One process, one event loop: each operation is atomic by itself.
 */
import { type IdpStateStore, type RecordOptions, STATE_KINDS, type StateKind } from "./store.ts";

interface Entry {
  value: unknown;
  pruneAt: number;
  group?: string;
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

export class MemoryStateStore implements IdpStateStore {
  readonly shared = false;
  private readonly maps = new Map<StateKind, Map<string, Entry>>(STATE_KINDS.map((k) => [k, new Map()]));
  private lastFullSweep = -Infinity;

  private map(kind: StateKind): Map<string, Entry> {
    return this.maps.get(kind)!;
  }

  private put(kind: StateKind, key: string, value: unknown, options: RecordOptions = {}): void {
    const entry: Entry = { value, pruneAt: options.pruneAt ?? Infinity };
    if (options.group !== undefined) entry.group = options.group;
    this.map(kind).set(key, entry);
  }

  async get<T>(kind: StateKind, key: string): Promise<T | undefined> {
    return this.map(kind).get(key)?.value as T | undefined;
  }

  async set<T>(kind: StateKind, key: string, value: T, options?: RecordOptions): Promise<void> {
    this.put(kind, key, value, options);
  }

  async add<T>(kind: StateKind, key: string, value: T, now: number, options?: RecordOptions): Promise<boolean> {
    const existing = this.map(kind).get(key);
    if (existing && existing.pruneAt > now) return false;
    this.put(kind, key, value, options);
    return true;
  }

  async take<T>(kind: StateKind, key: string, read?: T): Promise<T | undefined> {
    const entry = this.map(kind).get(key);
    if (!entry || (read !== undefined && !same(entry.value, read))) return undefined;
    this.map(kind).delete(key);
    return entry.value as T;
  }

  async swap<T>(kind: StateKind, key: string, expected: T, next: T, options?: RecordOptions): Promise<boolean> {
    const entry = this.map(kind).get(key);
    if (!entry || !same(entry.value, expected)) return false;
    this.put(kind, key, next, options);
    return true;
  }

  async delete(kind: StateKind, key: string): Promise<void> {
    this.map(kind).delete(key);
  }

  async deleteGroup(kinds: readonly StateKind[], group: string): Promise<void> {
    for (const kind of kinds) {
      const map = this.map(kind);
      for (const [key, entry] of map) if (entry.group === group) map.delete(key);
    }
  }

  async entries<T>(kind: StateKind): Promise<[string, T][]> {
    return [...this.map(kind)].map(([k, e]) => [k, e.value as T]);
  }

  async groupEntries<T>(kind: StateKind, group: string): Promise<[string, T][]> {
    return [...this.map(kind)].filter(([, e]) => e.group === group).map(([k, e]) => [k, e.value as T]);
  }

  async clear(kinds: readonly StateKind[]): Promise<void> {
    for (const k of kinds) this.map(k).clear();
  }

  private trimOldest(kind: StateKind, max: number): number {
    const map = this.map(kind);
    let dropped = 0;
    for (const key of map.keys()) {
      if (map.size <= max) break;
      map.delete(key);
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
  async prune(now: number, limits: Partial<Record<StateKind, number>> = {}): Promise<Partial<Record<StateKind, number>>> {
    const full = now - this.lastFullSweep >= 60_000;
    if (full) this.lastFullSweep = now;
    for (const map of this.maps.values()) {
      for (const [key, entry] of map) {
        if (entry.pruneAt <= now) map.delete(key);
        else if (!full) break;
      }
    }
    const dropped: Partial<Record<StateKind, number>> = {};
    for (const [kind, max] of Object.entries(limits) as [StateKind, number][]) dropped[kind] = this.trimOldest(kind, max);
    return dropped;
  }

  async close(): Promise<void> {}
}
