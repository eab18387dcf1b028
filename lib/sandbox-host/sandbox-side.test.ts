import { describe, expect, it } from "vitest";
import { type SandboxSide, serialized } from "./sandbox-side.ts";

const noEmit = () => {};
const noAsk = async () => undefined;

describe("serialized", () => {
  it("starts each call when the one before has settled, in order, failed ones included", async () => {
    const log: string[] = [];
    const gates = new Map<string, () => void>();
    const side: SandboxSide<string, string, never> = {
      async handle(req) {
        log.push(`start ${req}`);
        await new Promise<void>((resolve) => gates.set(req, resolve));
        log.push(`end ${req}`);
        if (req === "b") throw new Error("b failed");
        return req.toUpperCase();
      },
    };
    const s = serialized(side);
    const a = s.handle("a", noEmit, noAsk);
    const b = s.handle("b", noEmit, noAsk);
    const c = s.handle("c", noEmit, noAsk);
    await new Promise((r) => setTimeout(r, 5));
    expect(log).toEqual(["start a"]);
    gates.get("a")!();
    expect(await a).toBe("A");
    await new Promise((r) => setTimeout(r, 5));
    expect(log).toEqual(["start a", "end a", "start b"]);
    gates.get("b")!();
    await expect(b).rejects.toThrow("b failed");
    await new Promise((r) => setTimeout(r, 5));
    gates.get("c")!();
    expect(await c).toBe("C");
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    // Idle again: the next starts at once.
    const d = s.handle("d", noEmit, noAsk);
    expect(log.at(-1)).toBe("start d");
    gates.get("d")!();
    expect(await d).toBe("D");
  });

  it("turns a synchronous throw into a rejection and goes on", async () => {
    let n = 0;
    const side: SandboxSide<string, number, never> = {
      handle(req) {
        if (req === "throw") throw new Error("sync");
        return Promise.resolve(++n);
      },
    };
    const s = serialized(side);
    const results = [s.handle("throw", noEmit, noAsk), s.handle("ok", noEmit, noAsk), s.handle("throw", noEmit, noAsk), s.handle("ok", noEmit, noAsk)];
    const settled = await Promise.allSettled(results);
    expect(settled.map((r) => r.status)).toEqual(["rejected", "fulfilled", "rejected", "fulfilled"]);
    expect(settled.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual([1, 2]);
  });
});
