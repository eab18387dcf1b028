import { describe, expect, it } from "vitest";
import { inProcessSides } from "./in-process.ts";
import type { SandboxSide } from "./sandbox-side.ts";

describe("inProcessSides", () => {
  it("hands out at most `count` sides, first come first served, and closes each once on close", async () => {
    const closed: number[] = [];
    let made = 0;
    const open = (): SandboxSide<string, string, never> => {
      const n = ++made;
      return { handle: async (req) => `${n}:${req}`, close: () => void closed.push(n) };
    };
    const sides = inProcessSides(open, 2, () => ({}));
    const a = await sides.acquire();
    const b = await sides.acquire();
    const order: string[] = [];
    const third = sides.acquire().then((slot) => (order.push("third"), slot));
    const fourth = sides.acquire().then((slot) => (order.push("fourth"), slot));
    expect(made).toBe(2);
    sides.release(a);
    sides.release(b);
    const [c, d] = await Promise.all([third, fourth]);
    expect(order).toEqual(["third", "fourth"]);
    expect(await c.side.handle("x", () => {}, async () => null)).toBe("1:x");
    sides.release(c);
    sides.close();
    expect(closed).toEqual([1]);
    sides.release(d); // in use at close: closed when released
    expect(closed).toEqual([1, 2]);
  });
});
