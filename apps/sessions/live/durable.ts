/**
 * Live sessions on workerd: one Durable Object per session holds its SessionRuntime, so every
 * request for a session reaches the same sandbox; worktrees come from an R2 bucket.
 *
 * - `sessionRuntimeObject(options)` makes the Durable Object class (export it from the worker
 *   entry under the class name the binding names). It speaks a small HTTP protocol:
 *   `POST /open` (SessionSpec), `POST /execute` (ExecutionRequest; the answer streams NDJSON
 *   lines `{"event"}` as they are produced, then `{"outcome"}` or `{"error"}`), `POST /cancel`
 *   (204: the running execution was cancelled; 409: none runs), `POST /close`.
 *
 * Cancel reaches the object as a request, so it is handled when the object's thread is free: at
 * once while the execution waits on a timer or a host call, but only after the running slice ends
 * (at `cpu_ms` at the latest) while its code spins, since a workerd isolate has one thread and no
 * memory shared with another (the thread pool's cancel flag has no counterpart here).
 * - `durableRuntimes(namespace)` is the LiveRuntimes the REST layer uses, over the stubs.
 *
 * Caveat (measured): in local workerd (wrangler dev, miniflare) every Durable Object and Worker
 * runs on ONE thread, so a running execution holds that thread for up to `cpu_ms` and every other
 * request waits (a 2 s loop delayed /health by 1.8 s). In production, objects run apart.
 *
 * Idle sessions: workerd evicts a Durable Object some time after its last event (measured under
 * `wrangler dev`: about 10-15 s; in production 70-140 s), and a pending `setInterval` does not
 * count as an event, so the sandbox, which lives only in the object's memory, would go with it.
 * While a runtime is live the object therefore sets an alarm every KEEP_ALIVE_MS (an alarm is an
 * event), and clears it on close. The service's own object may still be evicted between
 * requests; when it starts again it asks each session's object (`POST /status`) whether the
 * runtime is still there (`adopt`), so only runtimes really gone (a restart of the daemon) are
 * closed as left over from a previous run.
 */
import { type R2BucketLike, r2FileTree } from "#lib/files";
import { loadQuickJS, type SandboxEngine } from "#lib/sandbox";
import { SessionRuntime } from "./session-runtime.ts";
import {
  type ExecutionOutcome,
  type ExecutionRequest,
  type LiveErrorCode,
  type LiveEvent,
  LiveRuntimeError,
  type LiveRuntimeOptions,
  type LiveRuntimes,
  type ModuleName,
  type SessionSpec,
} from "./types.ts";

interface SessionRuntimeObjectOptions<Env> {
  /** `@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm`, imported as a module. */
  wasmModule: WebAssembly.Module;
  /** The R2 binding that holds the worktrees (keys `<worktree path without leading slash>/<file>`). */
  worktrees(env: Env): R2BucketLike;
  /** Variables `env` capabilities may expose (default: none). */
  hostEnv?(env: Env): Record<string, string | undefined>;
  /** The deployment's module catalog (default: all of MODULE_CATALOG). */
  modules?(env: Env): readonly ModuleName[];
  /** Hard cap of the object's QuickJS heap, MiB (default 256). */
  maxHeapMb?: number;
}

/** The slice of a Durable Object stub used here. */
interface SessionObjectStub {
  fetch(input: string, init?: { method?: string; body?: string; headers?: Record<string, string> }): Promise<Response>;
}

/** The slice of a `DurableObjectState` used here (structural: no workers types). */
interface SessionObjectState {
  storage: { setAlarm(scheduledTime: number): Promise<void>; deleteAlarm(): Promise<void> };
}

/** The slice of a `DurableObjectNamespace` binding used here (structural: no workers types). */
interface SessionObjectNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): SessionObjectStub;
}

type WireError = { code?: LiveErrorCode; message: string };
type Line = { event: LiveEvent } | { outcome: ExecutionOutcome } | { error: WireError };

/** How long `cancel` waits before asking an object again that had not started the execution yet. */
const CANCEL_RETRY_MS = 10;

/** How often a live runtime's object wakes itself: well inside the shortest eviction window (10 s). */
const KEEP_ALIVE_MS = 4_000;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function wireError(err: unknown): WireError {
  return { code: err instanceof LiveRuntimeError ? err.code : undefined, message: err instanceof Error ? err.message : String(err) };
}

/** The error an object answered with (a JSON WireError, or just its status). */
async function wireErrorOf(res: Response): Promise<WireError> {
  return (await res.json().catch(() => ({ message: `HTTP ${res.status}` }))) as WireError;
}

/** The Durable Object class holding one session's runtime. */
export function sessionRuntimeObject<Env>(options: SessionRuntimeObjectOptions<Env>) {
  let engine: Promise<SandboxEngine> | undefined;
  return class SessionRuntimeObject {
    private runtime: SessionRuntime | undefined;
    private readonly live: LiveRuntimeOptions;
    private readonly state: SessionObjectState;

    constructor(ctx: SessionObjectState, env: Env) {
      this.state = ctx;
      this.live = {
        worktrees: r2FileTree(options.worktrees(env)),
        hostEnv: options.hostEnv?.(env),
        modules: options.modules?.(env),
      };
    }

    async fetch(request: Request): Promise<Response> {
      const { pathname } = new URL(request.url);
      try {
        if (request.method === "POST" && pathname === "/open") return await this.open((await request.json()) as SessionSpec);
        if (request.method === "POST" && pathname === "/execute") return this.execute((await request.json()) as ExecutionRequest);
        if (request.method === "POST" && pathname === "/cancel") return new Response(null, { status: this.runtime?.cancel() ? 204 : 409 });
        if (request.method === "POST" && pathname === "/close") {
          await this.close();
          return new Response(null, { status: 204 });
        }
        if (request.method === "POST" && pathname === "/status") {
          return this.runtime?.live
            ? new Response(null, { status: 204 })
            : json(404, { code: "SESSION_NOT_LIVE", message: "this session has no live runtime" });
        }
        return json(404, { message: "not found" });
      } catch (err) {
        return json(500, wireError(err));
      }
    }

    private async open(spec: SessionSpec): Promise<Response> {
      await this.close(); // a leftover of an earlier life of this id
      engine ??= loadQuickJS({ wasmModule: options.wasmModule, maxHeapMb: options.maxHeapMb ?? 256 });
      try {
        this.runtime = await SessionRuntime.open(await engine, spec, this.live);
      } catch (err) {
        return json(422, wireError(err instanceof LiveRuntimeError ? err : new LiveRuntimeError("STARTUP_FAILED", (err as Error).message)));
      }
      // An alarm keeps an idle object (and its sandbox) from being evicted (see the top).
      await this.state.storage.setAlarm(Date.now() + KEEP_ALIVE_MS);
      return new Response(null, { status: 204 });
    }

    /** The keep-alive: set again while the runtime is live. An object that wakes without one (it
     * was evicted anyway, or the daemon restarted) lets the alarm lapse. */
    async alarm(): Promise<void> {
      if (this.runtime?.live) await this.state.storage.setAlarm(Date.now() + KEEP_ALIVE_MS);
    }

    private execute(request: ExecutionRequest): Response {
      const runtime = this.runtime;
      if (!runtime?.live) return json(404, { code: "SESSION_NOT_LIVE", message: "this session has no live runtime" });
      // The object decides SESSION_BUSY (the client does not): it holds the runtime, and may
      // outlive the service's memory of what runs in it.
      if (runtime.busy) return json(409, { code: "SESSION_BUSY", message: "the session is already running an execution" });
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      const writer = writable.getWriter();
      const encoder = new TextEncoder();
      const send = (line: Line) => void writer.write(encoder.encode(JSON.stringify(line) + "\n")).catch(() => {});
      const done = runtime.execute(request, (event) => send({ event })).then(
        (outcome) => send({ outcome }),
        (err: unknown) => send({ error: wireError(err) }),
      );
      void done.finally(() => {
        if (!runtime.live) void this.close().catch(() => {});
        void writer.close().catch(() => {});
      });
      return new Response(readable, { headers: { "content-type": "application/x-ndjson" } });
    }

    private async close(): Promise<void> {
      const had = this.runtime !== undefined;
      this.runtime?.close();
      this.runtime = undefined;
      if (had) await this.state.storage.deleteAlarm();
    }
  };
}

/** Splits a byte stream into lines. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, cut);
      buffer = buffer.slice(cut + 1);
    }
  }
  if (buffer.trim()) yield buffer;
}

/**
 * LiveRuntimes over session objects: the caller's in-memory view (which ids are live, which run an
 * execution) plus one stub per session. `close` always reaches the object, so closing ids after a
 * restart frees any runtime left from before. A lost object is reported by the call that finds it
 * gone (RUNTIME_LOST), so there is no `onLost` here.
 */
export function durableRuntimes(namespace: SessionObjectNamespace): LiveRuntimes {
  const live = new Set<string>();
  /** Sessions running an execution, each with a token of its own (a cancel retried must not reach the next one). */
  const running = new Map<string, object>();
  const stub = (sessionId: string) => namespace.get(namespace.idFromName(sessionId));
  const post = (sessionId: string, path: string, body?: unknown) =>
    stub(sessionId).fetch(`https://session${path}`, {
      method: "POST",
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
  const lost = (sessionId: string, why: string) => {
    live.delete(sessionId);
    return new LiveRuntimeError("RUNTIME_LOST", why);
  };

  async function close(sessionId: string): Promise<void> {
    live.delete(sessionId);
    const res = await post(sessionId, "/close");
    await res.body?.cancel();
  }

  return {
    async open(spec) {
      if (live.has(spec.sessionId)) throw new LiveRuntimeError("STARTUP_FAILED", `session ${spec.sessionId} is already live`);
      let res: Response;
      try {
        res = await post(spec.sessionId, "/open", spec);
      } catch (err) {
        throw new LiveRuntimeError("STARTUP_FAILED", `the session's object failed: ${(err as Error).message}`);
      }
      if (!res.ok) throw new LiveRuntimeError("STARTUP_FAILED", (await wireErrorOf(res)).message);
      live.add(spec.sessionId);
    },

    async execute(sessionId, request, onEvent) {
      if (!live.has(sessionId)) throw new LiveRuntimeError("SESSION_NOT_LIVE", `session ${sessionId} is not live`);
      // SESSION_BUSY is the object's to answer; a second execute must not take the first's token.
      const token = {};
      if (!running.has(sessionId)) running.set(sessionId, token);
      try {
        let res: Response;
        try {
          res = await post(sessionId, "/execute", request);
        } catch (err) {
          throw lost(sessionId, `the session's object failed: ${(err as Error).message}`);
        }
        if (!res.ok) {
          const err = await wireErrorOf(res);
          if (err.code === "SESSION_NOT_LIVE") throw lost(sessionId, "the session's object no longer holds its runtime (it was evicted or restarted)");
          throw new LiveRuntimeError(err.code ?? "RUNTIME_LOST", err.message);
        }
        try {
          for await (const text of lines(res.body!)) {
            const line = JSON.parse(text) as Line;
            if ("event" in line) onEvent(line.event);
            else if ("outcome" in line) return line.outcome;
            else {
              if (line.error.code === "RUNTIME_LOST") live.delete(sessionId);
              throw new LiveRuntimeError(line.error.code ?? "RUNTIME_LOST", line.error.message);
            }
          }
        } catch (err) {
          if (err instanceof LiveRuntimeError) throw err;
          throw lost(sessionId, `the session's object failed during the execution: ${(err as Error).message}`);
        }
        throw lost(sessionId, "the session's object ended the execution without an outcome");
      } finally {
        if (running.get(sessionId) === token) running.delete(sessionId);
      }
    },

    async cancel(sessionId) {
      // The object answers 409 while its execute request has not reached it yet: ask again while
      // the execution is still ours to run (a short wait each time; it ends at wall_ms anyway).
      const token = running.get(sessionId);
      while (token && live.has(sessionId) && running.get(sessionId) === token) {
        const res = await post(sessionId, "/cancel").catch(() => undefined);
        await res?.body?.cancel();
        if (res?.status === 204) return true;
        if (res?.status !== 409) return false;
        await new Promise((r) => setTimeout(r, CANCEL_RETRY_MS));
      }
      return false;
    },

    close,

    liveIds: () => [...live],

    async adopt(sessionIds) {
      const alive = await Promise.all(
        sessionIds.map(async (id) => {
          try {
            const res = await post(id, "/status");
            await res.body?.cancel();
            return res.status === 204;
          } catch {
            return false;
          }
        }),
      );
      const adopted = sessionIds.filter((_, i) => alive[i]);
      for (const id of adopted) live.add(id);
      return adopted;
    },

    async shutdown() {
      await Promise.all([...live].map((id) => close(id).catch(() => {})));
    },
  };
}
