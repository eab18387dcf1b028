/**
 * The provider's state behind one small interface: named kinds of JSON-serializable records, each
 * with the provider-clock time after which it may be pruned, and optionally a group (the grant a
 * token belongs to, the subject of a session) whose records can be deleted together.
 *
 * Asynchronous, because the SQL store (sql.ts) may sit on a database that several instances share.
 * Everything that spends something single-use goes through an operation whose answer the store
 * decides at once for all instances: `take` (of concurrent takes of one key exactly one gets the
 * record), `add` (insert unless a live record exists) and `swap` (replace only what was read).
 */
export const STATE_KINDS = [
  "session",
  "code",
  "used_code",
  /** A rotated refresh token's grant id, until the token would have expired (a reuse revokes the grant). */
  "used_refresh_token",
  /** A revoked grant: a token request of it that was storing tokens meanwhile undoes them. */
  "revoked_grant",
  "access_token",
  "refresh_token",
  "device_grant",
  "user_code",
  "replay",
  /** A client with a back-channel logout URI that got tokens in a session (group: the session's sid). */
  "logout_client",
  /** A client registered at /register (RFC 7591), with its registration access token's hash. */
  "client",
  /** A pushed authorization request (RFC 9126), until its request_uri is used or expires. */
  "pushed_request",
  "scenario",
  "key",
  "setting",
] as const;

export type StateKind = (typeof STATE_KINDS)[number];

/** Kinds that `/debug/reset` clears (everything but the signing keys). */
export const RESETTABLE_KINDS: readonly StateKind[] = STATE_KINDS.filter((k) => k !== "key");

export interface RecordOptions {
  /** Provider-clock ms after which the record may be dropped (omitted: kept). */
  pruneAt?: number;
  /** Records of one group go together in `deleteGroup`. */
  group?: string;
}

export interface IdpStateStore {
  /**
   * True when other instances may share the store (a database): the provider then reads its
   * settings (clock offset, key endpoint mode, scenarios, keys) again for each request.
   */
  readonly shared: boolean;
  get<T>(kind: StateKind, key: string): Promise<T | undefined>;
  set<T>(kind: StateKind, key: string, value: T, options?: RecordOptions): Promise<void>;
  /** Inserts unless a record whose prune time is after `now` exists: true when this call inserted. */
  add<T>(kind: StateKind, key: string, value: T, now: number, options?: RecordOptions): Promise<boolean>;
  /**
   * Deletes the record and returns it; of concurrent takes of one key, one gets it. `read`: the
   * value the caller already read: the record is taken only while it still equals it (no second
   * read).
   */
  take<T>(kind: StateKind, key: string, read?: T): Promise<T | undefined>;
  /** Replaces the record only while it still equals `expected`: true when replaced. */
  swap<T>(kind: StateKind, key: string, expected: T, next: T, options?: RecordOptions): Promise<boolean>;
  delete(kind: StateKind, key: string): Promise<void>;
  /** Deletes the records of these kinds in one group. */
  deleteGroup(kinds: readonly StateKind[], group: string): Promise<void>;
  /** Records of a kind, oldest first. */
  entries<T>(kind: StateKind): Promise<[string, T][]>;
  /** Records of a kind in one group, oldest first. */
  groupEntries<T>(kind: StateKind, group: string): Promise<[string, T][]>;
  clear(kinds: readonly StateKind[]): Promise<void>;
  /**
   * Drops records whose prune time has passed, then the oldest records of each kind in `limits`
   * beyond its limit (in one batch for a database); returns how many each limit dropped.
   */
  prune(now: number, limits?: Partial<Record<StateKind, number>>): Promise<Partial<Record<StateKind, number>>>;
  close(): Promise<void>;
}
