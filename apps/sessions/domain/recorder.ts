/**
 * ExecutionRecorder: turns one execution's live events into stored records.
 *
 * - Nothing is written when the execution starts. A short execution (the common REPL input) is
 *   stored once, at the end: its final row and all its events in one batch (one transaction).
 * - `record` gives each event the next `seq` (from 1, no gaps) and a timestamp, keeps it, tells
 *   listeners (the SSE stream), and writes while the code runs: `flushMs` after the start (and
 *   after each later unsaved event), or every `batchSize` events. The first such write stores the
 *   `running` row with the events so far, so an execution that is still running after `flushMs`
 *   leaves a row that restart recovery closes if the daemon dies; later ones add events.
 * - `persist` writes what was recorded so far at once: a reader that asks for an execution in
 *   flight (the list of its session, the record, its events) gets it from the store after that,
 *   so nothing is reported before it is durable, and nothing in flight is hidden from a reader.
 * - `finish` waits for those writes, then stores the remaining events and the final row in one
 *   batch: when the response goes out, everything it says is durable.
 */
import type { SqlStore } from "#lib/db";
import type { LiveEvent } from "../live/types.ts";
import { finishExecutionStatement, insertEventsStatements, insertExecutionStatement } from "../store/executions.ts";
import { type Clock, type EventRecord, type ExecutionRecord, timestamp } from "./records.ts";

export interface RecorderOptions {
  /** Events per intermediate write (default 64). */
  batchSize?: number;
  /** Longest the running row, or an event, waits unsaved while the code runs, ms (default 50). */
  flushMs?: number;
  /** Told when an intermediate write fails (the events are retried with the final batch). */
  onWriteError?: (err: unknown) => void;
}

interface ExecutionListener {
  event(event: EventRecord): void;
  /** The final record (durable unless `finish` failed to store it). */
  end(execution: ExecutionRecord): void;
}

/** What `finish` needs to know about the end of the run. */
export type ExecutionEnd = Pick<ExecutionRecord, "status" | "result" | "error"> & { duration_ms: number; output_bytes: number };

export class ExecutionRecorder {
  /** Every event recorded so far, in `seq` order. */
  readonly events: EventRecord[] = [];
  private unsaved: EventRecord[] = [];
  private writes: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The `running` row is stored (or its write is under way). */
  private stored = false;
  private readonly listeners = new Set<ExecutionListener>();
  /** No more events are accepted (finish was called). */
  private ended = false;
  /** The final row is stored (or failed to be) and listeners were told. */
  private done = false;
  /** Settles (never rejects) when the final batch is stored or failed. */
  private finished: Promise<void> | undefined;
  private readonly batchSize: number;
  private readonly flushMs: number;

  private constructor(
    private readonly store: SqlStore,
    private readonly clock: Clock,
    readonly execution: ExecutionRecord,
    private readonly options: RecorderOptions,
  ) {
    this.batchSize = options.batchSize ?? 64;
    this.flushMs = options.flushMs ?? 50;
  }

  /** A recorder for an execution about to run (`execution.status` is `running`). Writes nothing
   * yet: the row is stored by the first write, `flushMs` from now, or by `finish`. */
  static begin(store: SqlStore, clock: Clock, execution: ExecutionRecord, options: RecorderOptions = {}): ExecutionRecorder {
    const recorder = new ExecutionRecorder(store, clock, execution, options);
    recorder.timer = setTimeout(() => void recorder.flush(), recorder.flushMs);
    return recorder;
  }

  get id(): string {
    return this.execution.id;
  }

  record(event: LiveEvent): EventRecord {
    if (this.ended) throw new Error(`execution ${this.id} has ended; no more events`);
    const record: EventRecord = {
      execution_id: this.id,
      seq: this.events.length + 1,
      ts: timestamp(this.clock()),
      type: event.type,
      payload: event.payload,
    };
    this.events.push(record);
    this.unsaved.push(record);
    for (const listener of this.listeners) listener.event(record);
    if (this.unsaved.length >= this.batchSize) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    return record;
  }

  /**
   * Subscribes to the events after `afterSeq` and to the end. The backlog (events already
   * recorded) is returned, and later ones are delivered, with no gap and no repeat between them.
   * Returns undefined once the execution is finished and stored (read the store instead).
   */
  follow(afterSeq: number, listener: ExecutionListener): { backlog: EventRecord[]; stop(): void } | undefined {
    if (this.done) return undefined;
    this.listeners.add(listener);
    return { backlog: this.events.slice(afterSeq), stop: () => void this.listeners.delete(listener) };
  }

  /** Writes the row and the events recorded so far now (a reader is about to look for them). */
  persist(): Promise<void> {
    if (this.ended) return this.finished ?? this.writes;
    return this.flush();
  }

  /** Stores the final row with the events not yet written, in one batch, and tells listeners. */
  finish(end: ExecutionEnd): Promise<ExecutionRecord> {
    const stored = this.storeFinal(end);
    this.finished = stored.then(
      () => undefined,
      () => undefined,
    );
    return stored;
  }

  private async storeFinal(end: ExecutionEnd): Promise<ExecutionRecord> {
    this.ended = true;
    this.clearTimer();
    await this.writes;
    const rest = this.unsaved;
    this.unsaved = [];
    const { metrics: _running, ...execution } = this.execution;
    const done: ExecutionRecord = {
      ...execution,
      status: end.status,
      ended_at: timestamp(this.clock()),
      ...(end.result !== undefined && { result: end.result }),
      ...(end.error !== undefined && { error: end.error }),
      metrics: { duration_ms: end.duration_ms, events: this.events.length, output_bytes: end.output_bytes },
    };
    const row = this.stored ? finishExecutionStatement(done) : insertExecutionStatement(done);
    try {
      await this.store.batch([row, ...insertEventsStatements(rest)]);
    } finally {
      this.done = true;
      for (const listener of this.listeners) listener.end(done);
      this.listeners.clear();
    }
    return done;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Writes the `running` row (the first time) and the events recorded since the last write,
   * after the writes before it. */
  private flush(): Promise<void> {
    this.clearTimer();
    const batch = this.unsaved;
    if (this.ended || (batch.length === 0 && this.stored)) return this.writes;
    this.unsaved = [];
    const statements = insertEventsStatements(batch);
    const first = !this.stored;
    if (first) statements.unshift(insertExecutionStatement(this.execution));
    this.stored = true;
    this.writes = this.writes.then(
      () =>
        this.store.batch(statements).then(
          () => undefined,
          (err: unknown) => {
            // Put them back in front: the final batch stores them (and the row), still in order.
            this.unsaved = [...batch, ...this.unsaved];
            if (first) this.stored = false;
            this.options.onWriteError?.(err);
          },
        ),
    );
    return this.writes;
  }
}
