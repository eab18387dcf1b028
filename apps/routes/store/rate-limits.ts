/**
 * Where rate-limit counters live: fixed windows (`floor(now / window)`), one counter per key and
 * window, counted and decided in one step, so concurrent requests never both take the last slot.
 *
 * - memory (`memoryRateLimitStore`): one process. Bounded: at most `maxKeys` counters (default
 *   100,000, a few MB); a counter whose window ended is dropped when next seen, and when the map
 *   is full the counter counted least recently makes room. A flood of new keys can therefore at
 *   worst reset the oldest counters early, never grow memory.
 * - SQL (`sqlRateLimitStore`, the host's libSQL database, or the store's Durable Object on
 *   workerd): shared by every instance on the database. The decision is one upsert whose WHERE
 *   refuses to count past the limit, so SQLite's write lock makes it exact across processes;
 *   counters of ended windows are pruned as new ones are written, a bounded batch at a time.
 */
import type { SqlStore } from "#lib/db";

export interface RateLimitHit {
  /** Counted: within the limit. Refused requests are not counted. */
  allowed: boolean;
  /** Requests counted in the window so far (the limit when refused). */
  count: number;
  /** When the window ends, epoch ms. */
  resetAt: number;
}

export interface RateLimitStore {
  /** Counts one request for `key` in the window of `windowMs` that holds `now`, unless `limit` are counted already. */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitHit>;
}

/** The window holding `now`: its start and end, epoch ms. */
function windowOf(now: number, windowMs: number): { start: number; end: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
}

const DEFAULT_MAX_KEYS = 100_000;

export function memoryRateLimitStore(options: { maxKeys?: number } = {}): RateLimitStore & { readonly size: number } {
  const maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_KEYS);
  // Insertion order is recency order: a counted key is moved to the end.
  const counters = new Map<string, { start: number; count: number }>();
  return {
    get size() {
      return counters.size;
    },
    async hit(key, limit, windowMs, now) {
      const { start, end } = windowOf(now, windowMs);
      let counter = counters.get(key);
      if (counter && counter.start < start) counter = undefined; // its window ended
      counters.delete(key);
      if (counter && counter.count >= limit) {
        counters.set(key, counter); // still the most recent: a flood of other keys evicts it last
        return { allowed: false, count: counter.count, resetAt: end };
      }
      if (counters.size >= maxKeys) counters.delete(counters.keys().next().value!);
      const next = { start, count: (counter?.count ?? 0) + 1 };
      counters.set(key, next);
      return { allowed: true, count: next.count, resetAt: end };
    },
  };
}

export const RATE_LIMIT_MIGRATION_STATEMENTS = [
  `CREATE TABLE rate_limit_counters (
    key TEXT PRIMARY KEY,
    window_start INTEGER NOT NULL,
    count INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  )`,
  "CREATE INDEX rate_limit_counters_expires ON rate_limit_counters (expires_at)",
];

/** Counts a request unless the current window's count reached the limit (then nothing changes).
 * A later window starts again at 1; a clock behind another instance's counts in the newer one. */
const COUNT = `INSERT INTO rate_limit_counters (key, window_start, count, expires_at) VALUES (?, ?, 1, ?)
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN excluded.window_start > window_start THEN 1 ELSE count + 1 END,
    window_start = MAX(window_start, excluded.window_start),
    expires_at = MAX(expires_at, excluded.expires_at)
  WHERE excluded.window_start > window_start OR count < ?`;

/** How often ended windows are pruned, at most (ms), unless a backlog is left. */
const PRUNE_EVERY_MS = 60_000;
/** Rows one prune deletes at most: a flood of distinct clients (IPv6 /64s) can leave millions of
 * ended windows, and deleting them in one statement holds the database's write lock for seconds,
 * stalling every instance's counting. A full batch means a backlog: the next count prunes again. */
export const PRUNE_BATCH = 1000;
const PRUNE = `DELETE FROM rate_limit_counters WHERE key IN
  (SELECT key FROM rate_limit_counters WHERE expires_at <= ? LIMIT ${PRUNE_BATCH})`;

export function sqlRateLimitStore(store: SqlStore): RateLimitStore {
  let prunedAt = 0;
  let backlog = false;
  let pruning = false; // one prune at a time: concurrent counts do not queue behind more of them
  return {
    async hit(key, limit, windowMs, now) {
      const { start, end } = windowOf(now, windowMs);
      if (!pruning && (backlog || now - prunedAt >= PRUNE_EVERY_MS)) {
        prunedAt = now;
        pruning = true;
        try {
          backlog = (await store.execute(PRUNE, [now])).changes >= PRUNE_BATCH;
        } finally {
          pruning = false;
        }
      }
      const { changes } = await store.execute(COUNT, [key, start, end, limit]);
      if (changes === 0) return { allowed: false, count: limit, resetAt: end };
      // What the window holds now (other instances may have counted since): for RateLimit's r=.
      const [row] = await store.query<{ count: number; window_start: number }>("SELECT count, window_start FROM rate_limit_counters WHERE key = ?", [key]);
      const count = row && Number(row.window_start) === start ? Math.min(Number(row.count), limit) : 1;
      return { allowed: true, count, resetAt: end };
    },
  };
}
