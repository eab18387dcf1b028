/**
 * ExecutionRecorder: turns one execution's live events into stored records.
 *
 * - `start` persists the `running` row before anything runs, so a crash mid-run leaves a row that
 *   restart recovery can close.
 * - `record` gives each event the next `seq` (from 1, no gaps) and a timestamp, keeps it, tells
 *   listeners (the SSE stream), and writes events in batches while the code runs (every
 *   `batchSize` events or `flushMs` after the first unsaved one), so a poller sees progress.
 * - `finish` waits for those writes, then stores the remaining events and the final row in one
 *   batch: when the response goes out, everything it says is durable.
 */
import type { SqlStore } from "../../../lib/db/store.ts";
import type { LiveEvent } from "../live/types.ts";
import { finishExecutionStatement, insertEventStatement, insertExecutionStatement } from "../store/executions.ts";
import { timestamp, type Clock, type EventRecord, type ExecutionRecord } from "./records.ts";

export interface RecorderOptions {
  /** Events per intermediate write (default 64). */
  batchSize?: number;
  /** Longest an event waits unsaved while the code runs, ms (default 50). */
  flushMs?: number;
  /** Told when an intermediate write fails (the events are retried with the final batch). */
  onWriteError?: (err: unknown) => void;
}

export interface ExecutionListener {
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
  private readonly listeners = new Set<ExecutionListener>();
  /** No more events are accepted (finish was called). */
  private ended = false;
  /** The final row is stored (or failed to be) and listeners were told. */
  private done = false;
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

  /** Stores the `running` row, then returns the recorder for it. */
  static async start(store: SqlStore, clock: Clock, execution: ExecutionRecord, options: RecorderOptions = {}): Promise<ExecutionRecorder> {
    const insert = insertExecutionStatement(execution);
    await store.execute(insert.sql, insert.args);
    return new ExecutionRecorder(store, clock, execution, options);
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

  /** Stores the final row with the events not yet written, in one batch, and tells listeners. */
  async finish(end: ExecutionEnd): Promise<ExecutionRecord> {
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
    try {
      await this.store.batch([...rest.map(insertEventStatement), finishExecutionStatement(done)]);
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

  /** Writes the events recorded since the last write, after the writes before it. */
  private flush(): Promise<void> {
    this.clearTimer();
    const batch = this.unsaved;
    if (batch.length === 0 || this.ended) return this.writes;
    this.unsaved = [];
    this.writes = this.writes.then(
      () =>
        this.store.batch(batch.map(insertEventStatement)).then(
          () => undefined,
          (err: unknown) => {
            // Put them back in front: the final batch stores them, still in order.
            this.unsaved = [...batch, ...this.unsaved];
            this.options.onWriteError?.(err);
          },
        ),
    );
    return this.writes;
  }
}
