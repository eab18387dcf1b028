/**
 * The provider's state behind one small interface: named kinds of JSON-serializable records, each
 * with the provider-clock time after which it may be pruned. Synchronous on purpose: the in-memory
 * store is plain Maps, and the Durable Object store keeps the same Maps as a cache in front of the
 * object's synchronous SQLite storage (write-through).
 */
export const STATE_KINDS = [
  "session",
  "code",
  "used_code",
  "access_token",
  "refresh_token",
  "device_grant",
  "user_code",
  "replay",
  "scenario",
  "key",
  "setting",
] as const;

export type StateKind = (typeof STATE_KINDS)[number];

/** Kinds that `/debug/reset` clears (everything but the signing keys). */
export const RESETTABLE_KINDS: readonly StateKind[] = STATE_KINDS.filter((k) => k !== "key");

export interface IdpStateStore {
  get<T>(kind: StateKind, key: string): T | undefined;
  /** `pruneAt`: provider-clock ms after which the record may be dropped (omitted: kept). */
  set<T>(kind: StateKind, key: string, value: T, pruneAt?: number): void;
  delete(kind: StateKind, key: string): void;
  /** Records of a kind, oldest first. */
  entries<T>(kind: StateKind): [string, T][];
  count(kind: StateKind): number;
  clear(kinds: readonly StateKind[]): void;
  /** Drops records whose prune time has passed. */
  prune(now: number): void;
  /** Drops the oldest records of a kind beyond `max`; returns how many went. */
  trimOldest(kind: StateKind, max: number): number;
}
