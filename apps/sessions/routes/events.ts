/**
 * An execution's events: polled (`/events?after_seq=`), or pushed as Server-Sent Events
 * (`/events/stream`, beyond the spec). The stream replays the events after `after_seq` (or the
 * `Last-Event-ID` a reconnecting EventSource sends), follows live events while the execution
 * runs, and ends with one `end` event carrying the final execution record, then closes.
 */
import type { Context, Hono } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import * as v from "valibot";
import { validationError } from "#lib/http";
import type { ServiceContext } from "../domain/context.ts";
import * as executions from "../domain/executions.ts";
import type { EventRecord, ExecutionRecord } from "../domain/records.ts";
import { describe, params, query } from "./api.ts";
import { EventSchema, EventsQuery, ExecutionParams } from "./schemas.ts";

const TAG = "executions";
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

export function registerEvents(routes: Hono, ctx: ServiceContext): void {
  routes.get(
    "/executions/:execution_id/events",
    describe({
      tag: TAG,
      summary: "The execution's events in seq order, all or those after after_seq",
      response: { status: 200, description: "Events", schema: v.array(EventSchema) },
      errors: ["EXECUTION_NOT_FOUND"],
    }),
    params(ExecutionParams),
    query(EventsQuery),
    async (c) => c.json(await executions.listEvents(ctx, c.req.valid("param").execution_id, c.req.valid("query").after_seq ?? 0)),
  );

  routes.get(
    "/executions/:execution_id/events/stream",
    describe({
      tag: TAG,
      summary: "The execution's events as Server-Sent Events (beyond the spec)",
      description: "Each event is an SSE message with `id` = seq and `data` = the event record (JSON). After the last one, an " +
        "`end` message carries the final execution record and the stream closes; clients should not reconnect after it. " +
        "Replay starts after `after_seq`, or after the Last-Event-ID header when the query has none.",
      response: { status: 200, description: "text/event-stream of Event records, then `end`", schema: EventSchema, contentType: "text/event-stream" },
      errors: ["EXECUTION_NOT_FOUND"],
    }),
    params(ExecutionParams),
    query(EventsQuery),
    async (c) => {
      const afterSeq = c.req.valid("query").after_seq ?? lastEventId(c) ?? 0;
      const execution = await executions.requireExecution(ctx, c.req.valid("param").execution_id);
      return streamSSE(c, (stream) => streamEvents(ctx, stream, execution, afterSeq));
    },
  );
}

function lastEventId(c: Context): number | undefined {
  const header = c.req.header("last-event-id");
  if (header === undefined || header === "") return undefined;
  const parsed = v.safeParse(v.pipe(v.string(), v.regex(/^[0-9]+$/)), header);
  if (!parsed.success) {
    throw validationError("Last-Event-ID must be a non-negative integer", { issues: [{ path: "Last-Event-ID", message: "must be a non-negative integer" }] });
  }
  return Number(header);
}

async function streamEvents(ctx: ServiceContext, stream: SSEStreamingApi, execution: ExecutionRecord, afterSeq: number): Promise<void> {
  const send = (event: EventRecord) => stream.writeSSE({ id: String(event.seq), data: JSON.stringify(event) });
  const queue: EventRecord[] = [];
  let final: ExecutionRecord | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };

  // Subscribe before reading anything, so no event falls between the replay and the live ones.
  const following = ctx.recorders.get(execution.id)?.follow(afterSeq, {
    event: (event) => {
      queue.push(event);
      notify();
    },
    end: (record) => {
      final = record;
      notify();
    },
  });
  stream.onAbort(() => {
    following?.stop();
    notify();
  });
  if (following) {
    queue.unshift(...following.backlog);
  } else {
    // Finished (or run by no one here): the store has everything.
    for (const event of await executions.listEvents(ctx, execution.id, afterSeq)) await send(event);
    final = await executions.requireExecution(ctx, execution.id);
  }

  while (!stream.aborted) {
    while (queue.length > 0 && !stream.aborted) await send(queue.shift()!);
    if (final) break;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        void stream.write(": keepalive\n\n").then(() => resolve());
      }, KEEPALIVE_MS);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  following?.stop();
  if (final && !stream.aborted) await stream.writeSSE({ event: "end", data: JSON.stringify(final) });
}
