/** The pool's calls and the thread's questions to its host, over in-memory ports. */
import { describe, expect, it } from "vitest";
import { createThreadPool, MAX_TIMER_MS, type PoolMessage, type PoolReply, serveThreadCalls, ThreadCallError, timerDelay } from "./pool.ts";
import type { SpawnThread, ThreadEndpoint } from "./threads.ts";

type Req = { op: "sum"; n: number } | { op: "ask"; questions: unknown[] } | { op: "echo"; value: unknown } | { op: "slow"; ms: number } | {
  op: "deep";
  depth: number;
};
type In = PoolMessage<{ base: number }, Req>;
type Out = PoolReply<unknown, string>;

/** A "thread" in this process: messages are cloned as they are posted (so a value that cannot be
 * copied throws in `post`, as with worker_threads and Web Workers) and cross asynchronously. */
function inMemorySpawn(serve: (endpoint: ThreadEndpoint<In, Out>) => void): SpawnThread<In, Out> {
  return () => {
    let toHost: (m: Out) => void = () => {};
    let toThread: (m: In) => void = () => {};
    let terminated = false;
    const cross = <T>(m: T, to: () => (m: T) => void) => {
      const copy = structuredClone(m);
      queueMicrotask(() => !terminated && to()(copy));
    };
    serve({ post: (m) => cross(m, () => toHost), listen: (fn) => (toThread = fn) });
    return {
      post: (m) => cross(m, () => toThread),
      listen: (onMessage) => (toHost = onMessage),
      terminate: () => (terminated = true),
    };
  };
}

function thread(endpoint: ThreadEndpoint<In, Out>, heartbeatMs?: number) {
  let base = 0;
  serveThreadCalls(endpoint, {
    init: (init) => void (base = init.base),
    async handle(req, _emit, ask) {
      if (req.op === "sum") return base + req.n;
      if (req.op === "echo") return req.value;
      if (req.op === "slow") return new Promise((resolve) => setTimeout(() => resolve("slept"), req.ms));
      if (req.op === "deep") return nested(req.depth);
      const answers: unknown[] = [];
      for (const q of req.questions) {
        try {
          answers.push(await ask(q === "a function" ? () => 2 : q));
        } catch (err) {
          answers.push({ failed: (err as Error).message, code: (err as { code?: string }).code });
        }
      }
      return answers;
    },
  }, { heartbeatMs });
}

/** `[[[...]]]`, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
}

describe("the thread pool", () => {
  const pool = () =>
    createThreadPool<{ base: number }, Req, unknown, string, object>(inMemorySpawn(thread), { size: 1, init: () => ({ base: 40 }), newState: () => ({}) });

  it("hears a thread's heartbeat while its calls only wait, and none once they are answered", async () => {
    const alive: number[] = [];
    const p = createThreadPool<{ base: number }, Req, unknown, string, object>(inMemorySpawn((e) => thread(e, 5)), {
      size: 1,
      init: () => ({ base: 0 }),
      newState: () => ({}),
      onAlive: () => void alive.push(1),
    });
    expect(await p.call(p.pick(() => false), { op: "slow", ms: 60 }, 1000)).toBe("slept");
    expect(alive.length).toBeGreaterThanOrEqual(2);
    const heard = alive.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(alive.length).toBe(heard);
    p.shutdown();
  });

  it("answers calls with the thread's results", async () => {
    const p = pool();
    expect(await p.call(p.pick(() => false), { op: "sum", n: 2 }, 1000)).toBe(42);
    p.shutdown();
  });

  it("lets a running call ask its caller, and carries the caller's failures back with their codes", async () => {
    const p = pool();
    const asked: unknown[] = [];
    const onAsk = async (q: unknown) => {
      asked.push(q);
      if (q === "bad") throw Object.assign(new Error("no such thing"), { code: "NOPE" });
      return { echo: q };
    };
    const answers = await p.call(p.pick(() => false), { op: "ask", questions: ["a", "bad", { deep: [1, 2] }] }, 1000, undefined, onAsk);
    expect(answers).toEqual([{ echo: "a" }, { failed: "no such thing", code: "NOPE" }, { echo: { deep: [1, 2] } }]);
    expect(asked).toEqual(["a", "bad", { deep: [1, 2] }]);
    p.shutdown();
  });

  it("refuses a question from a call whose caller takes none", async () => {
    const p = pool();
    expect(await p.call(p.pick(() => false), { op: "ask", questions: ["x"] }, 1000)).toEqual([{ failed: "this call takes no questions" }]);
    p.shutdown();
  });

  it("rejects calls once it is shut down", async () => {
    const p = pool();
    const t = p.pick(() => false);
    p.shutdown();
    await expect(p.call(t, { op: "sum", n: 1 }, 1000)).rejects.toBeInstanceOf(ThreadCallError);
  });

  it("fails a call whose request cannot be copied, alone: the thread and its other calls live on", async () => {
    const lost: string[] = [];
    const p = createThreadPool<{ base: number }, Req, unknown, string, object>(inMemorySpawn(thread), {
      size: 1,
      init: () => ({ base: 40 }),
      newState: () => ({}),
      onThreadLost: (_, reason) => lost.push(reason),
    });
    const t = p.pick(() => false);
    // Posted in the same turn: they cross as one batch, which the bad one makes the channel refuse.
    const calls = [
      p.call(t, { op: "sum", n: 1 }, 1000),
      p.call(t, { op: "echo", value: () => 1 }, 1000),
      p.call(t, { op: "echo", value: nested(200_000) }, 1000),
      p.call(t, { op: "sum", n: 2 }, 1000),
    ];
    const [a, fn, deep, b] = await Promise.allSettled(calls);
    expect(a).toEqual({ status: "fulfilled", value: 41 });
    expect(b).toEqual({ status: "fulfilled", value: 42 });
    for (const failed of [fn, deep]) {
      expect(failed!.status).toBe("rejected");
      const err = (failed as PromiseRejectedResult).reason as ThreadCallError;
      expect(err).toBeInstanceOf(ThreadCallError);
      expect(err.code).toBe("MESSAGE_NOT_SENT");
      expect(err.lost).toBe(false);
    }
    expect(await p.call(t, { op: "sum", n: 3 }, 1000)).toBe(43);
    expect(lost).toEqual([]);
    expect(t.dead).toBe(false);
    p.shutdown();
  });

  it("fails a call whose result cannot be copied back, and the thread lives on", async () => {
    const p = pool();
    const t = p.pick(() => false);
    await expect(p.call(t, { op: "deep", depth: 200_000 }, 1000)).rejects.toMatchObject({ code: "MESSAGE_NOT_SENT", lost: false });
    expect(await p.call(t, { op: "sum", n: 2 }, 1000)).toBe(42);
    p.shutdown();
  });

  it("a question or an answer that cannot be copied fails that question alone", async () => {
    const p = pool();
    const onAsk = (q: unknown) => (q === "give me a function" ? () => 1 : { echo: q });
    // The thread asks with a question it cannot send, then one the host answers with a value it cannot send.
    const answers = await p.call(p.pick(() => false), { op: "ask", questions: ["a function", "give me a function", "fine"] }, 1000, undefined, onAsk);
    expect(answers).toEqual([
      { failed: expect.stringMatching(/the question could not be sent/), code: "MESSAGE_NOT_SENT" },
      { failed: expect.stringMatching(/the answer could not be sent/), code: "MESSAGE_NOT_SENT" },
      { echo: "fine" },
    ]);
    p.shutdown();
  });

  it("clamps the watchdog: a timeout past 2^31-1 ms does not fire after 1 ms", async () => {
    expect(timerDelay(2 ** 31)).toBe(MAX_TIMER_MS);
    expect(timerDelay(Number.MAX_SAFE_INTEGER)).toBe(MAX_TIMER_MS);
    expect(timerDelay(Infinity)).toBe(MAX_TIMER_MS);
    expect(timerDelay(-5)).toBe(0);
    expect(timerDelay(NaN)).toBe(0);
    const p = pool();
    const t = p.pick(() => false);
    await p.call(t, { op: "sum", n: 0 }, 1000); // ready: watchdogs are armed from now on
    expect(await p.call(t, { op: "slow", ms: 30 }, 2 ** 31 + 2000)).toBe("slept");
    expect(await p.call(t, { op: "slow", ms: 30 }, 86_400_000 * 30)).toBe("slept");
    p.shutdown();
  });
});
