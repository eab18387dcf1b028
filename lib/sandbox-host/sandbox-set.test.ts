import { describe, expect, it } from "vitest";
import { createSandboxSet } from "./sandbox-set.ts";

function counting(max: number, idleMs = 1000) {
  let made = 0;
  let clock = 0;
  const closed: number[] = [];
  const set = createSandboxSet<number>({ open: async () => ++made, close: (n) => void closed.push(n), max, idleMs, now: () => clock });
  return { set, closed, made: () => made, tick: (ms: number) => void (clock += ms) };
}

describe("a side's sandbox set", () => {
  it("opens another while all are in use, up to max; then callers wait for one to be free", async () => {
    const { set, made } = counting(2);
    const a = await set.acquire();
    const b = await set.acquire();
    expect([a, b, made()]).toEqual([1, 2, 2]);
    const third = set.acquire();
    const fourth = set.acquire();
    set.release(b);
    set.release(a);
    expect((await Promise.all([third, fourth])).sort()).toEqual([1, 2]);
    expect(made()).toBe(2);
  });

  it("hands out the most recently used free one, and closes the others once idle, keeping one", async () => {
    const { set, closed, tick } = counting(3, 1000);
    const [a, b, c] = [await set.acquire(), await set.acquire(), await set.acquire()];
    set.release(a);
    tick(10);
    set.release(b);
    expect(set.take()).toBe(b);
    set.release(b);
    tick(2000);
    set.release(c); // a and b idled past 1 s: closed; c is fresh
    expect(closed).toEqual([1, 2]);
    expect(set.size).toBe(1);
    tick(2000);
    expect(set.take()).toBe(3);
    set.release(3); // the last one stays however long it idled
    expect(set.size).toBe(1);
  });

  it("frees the place of a discarded one for the next caller, and refuses an add beyond max", async () => {
    const { set, closed } = counting(1);
    const a = await set.acquire();
    const waiter = set.acquire();
    set.discard(a);
    expect(await waiter).toBe(2);
    set.add(9);
    expect(closed).toEqual([1, 9]);
    set.release(2);
    set.closeFree();
    expect([set.size, closed]).toEqual([0, [1, 9, 2]]);
  });

  it("with handOff, gives a released sandbox to the caller in line, and opens another only for one still waiting a turn later", async () => {
    let made = 0;
    const set = createSandboxSet<number>({ open: async () => ++made, close: () => {}, max: 3, handOff: true });
    const a = await set.acquire();
    // Released within the turn (a handler that ran to its end): the next caller gets it, nothing opens.
    const next = set.acquire();
    queueMicrotask(() => set.release(a));
    expect(await next).toBe(1);
    await new Promise((r) => setTimeout(r, 5));
    expect(made).toBe(1);
    // Held past the turn (a handler that waits): another opens for the caller in line.
    expect(await set.acquire()).toBe(2);
    expect(set.size).toBe(2);
  });

  it("gives up a place whose sandbox failed to open", async () => {
    let fail = true;
    const set = createSandboxSet<string>({ open: async () => (fail ? Promise.reject(new Error("no")) : "ok"), close: () => {}, max: 1 });
    await expect(set.acquire()).rejects.toThrow("no");
    fail = false;
    expect(await set.acquire()).toBe("ok");
  });
});
