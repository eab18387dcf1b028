/**
 * Group commit over any SqlStore: the writes (`batch` and `execute`) that arrive in the same turn
 * of the event loop, or while the previous group is being committed, run as ONE transaction, so
 * an embedded database pays one commit (one fsync) for many requests instead of one each.
 *
 * Each caller still sees its own batch as atomic and gets its own change counts. If the merged
 * transaction fails (one batch's constraint error, say), nothing of it was applied, and each
 * batch is run again alone, in order: the failing one fails for its caller only. Batches keep
 * their arrival order, so a merged transaction changes the data exactly as running them one
 * after the other would. Reads (`query`) are not queued: a write is visible once its promise
 * resolves, as before.
 */
import type { SqlStatement, SqlStore } from "./store.ts";

export interface GroupCommitOptions {
  /**
   * Runs `flush` later, after the writes of the current turn have queued (default: a zero
   * `setTimeout`). On Node and Deno `setImmediate` is the right choice: it runs once the I/O
   * callbacks of this loop iteration are done.
   */
  schedule?: (flush: () => void) => void;
  /** Most statements in one merged transaction; the rest wait for the next one (default 1000). */
  maxStatements?: number;
}

interface Pending {
  statements: SqlStatement[];
  resolve(changes: number[]): void;
  reject(err: unknown): void;
}

export function groupCommit(store: SqlStore, options: GroupCommitOptions = {}): SqlStore {
  const schedule = options.schedule ?? ((flush: () => void) => void setTimeout(flush, 0));
  const maxStatements = Math.max(1, options.maxStatements ?? 1000);
  let queue: Pending[] = [];
  let scheduled = false;
  let committing: Promise<void> | undefined;

  function kick(): void {
    if (scheduled || committing || queue.length === 0) return;
    scheduled = true;
    schedule(() => {
      scheduled = false;
      committing = commitNext().finally(() => {
        committing = undefined;
        kick();
      });
    });
  }

  /** Takes the oldest queued batches (up to maxStatements, at least one) and commits them. */
  async function commitNext(): Promise<void> {
    let count = 0;
    let n = 0;
    while (n < queue.length && (n === 0 || count + queue[n]!.statements.length <= maxStatements)) count += queue[n++]!.statements.length;
    const group = queue.slice(0, n);
    queue = queue.slice(n);
    if (group.length === 1) return runAlone(group[0]!);
    let changes: number[];
    try {
      changes = await store.batch(group.flatMap((p) => p.statements));
    } catch {
      for (const p of group) await runAlone(p);
      return;
    }
    let at = 0;
    for (const p of group) {
      p.resolve(changes.slice(at, at + p.statements.length));
      at += p.statements.length;
    }
  }

  async function runAlone(p: Pending): Promise<void> {
    try {
      p.resolve(await store.batch(p.statements));
    } catch (err) {
      p.reject(err);
    }
  }

  function enqueue(statements: SqlStatement[]): Promise<number[]> {
    return new Promise((resolve, reject) => {
      queue.push({ statements, resolve, reject });
      kick();
    });
  }

  return {
    query: (sql, args) => store.query(sql, args),
    async execute(sql, args) {
      const [changes] = await enqueue([{ sql, args }]);
      return { changes: changes ?? 0 };
    },
    async batch(statements) {
      if (statements.length === 0) return [];
      return enqueue(statements);
    },
    async close() {
      // What was accepted is committed before the store closes.
      while (queue.length > 0 || scheduled || committing) await (committing ?? new Promise((r) => setTimeout(r, 0)));
      await store.close();
    },
  };
}
