import { describe, expect, it } from "vitest";
import { nodeThreadSpawner } from "./node-threads.ts";

describe("nodeThreadSpawner", () => {
  it("runs a TypeScript entry as a plain-JS bundle (no TypeScript loader in the thread)", async () => {
    const port = nodeThreadSpawner<{ n: number }, { n: number; url: string }>(new URL("./testdata/echo-thread.ts", import.meta.url))();
    try {
      const reply = new Promise<{ n: number; url: string }>((resolve, reject) => port.listen(resolve, reject));
      port.post({ n: 1 });
      const { n, url } = await reply;
      expect(n).toBe(2);
      expect(url).toMatch(/\/node_modules\/\.cache\/thread-entries\/echo-thread-[0-9a-f]{16}\.mjs$/);
    } finally {
      port.terminate();
    }
  });
});
