/** The pool's calls and the thread's questions to its host, over in-memory ports. */
import { describe, expect, it } from "vitest";
import { createThreadPool, serveThreadCalls, ThreadCallError, type PoolMessage, type PoolReply } from "./thread-pool.ts";
import type { SpawnThread, ThreadEndpoint } from "./threads.ts";

type Req = { op: "sum"; n: number } | { op: "ask"; questions: unknown[] };
type In = PoolMessage<{ base: number }, Req>;
type Out = PoolReply<unknown, string>;

/** A "thread" in this process: messages cross asynchronously and are cloned, as between threads. */
function inMemorySpawn(serve: (endpoint: ThreadEndpoint<In, Out>) => void): SpawnThread<In, Out> {
  return () => {
    let toHost: (m: Out) => void = () => {};
    let toThread: (m: In) => void = () => {};
    let terminated = false;
    serve({ post: (m) => queueMicrotask(() => !terminated && toHost(structuredClone(m))), listen: (fn) => (toThread = fn) });
    return {
      post: (m) => queueMicrotask(() => !terminated && toThread(structuredClone(m))),
      listen: (onMessage) => (toHost = onMessage),
      terminate: () => (terminated = true),
    };
  };
}

function thread(endpoint: ThreadEndpoint<In, Out>) {
  let base = 0;
  serveThreadCalls(endpoint, {
    init: (init) => void (base = init.base),
    async handle(req, _emit, ask) {
      if (req.op === "sum") return base + req.n;
      const answers: unknown[] = [];
      for (const q of req.questions) {
        try {
          answers.push(await ask(q));
        } catch (err) {
          answers.push({ failed: (err as Error).message, code: (err as { code?: string }).code });
        }
      }
      return answers;
    },
  });
}

describe("the thread pool", () => {
  const pool = () => createThreadPool<{ base: number }, Req, unknown, string, object>(inMemorySpawn(thread), { size: 1, init: () => ({ base: 40 }), newState: () => ({}) });

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
});
