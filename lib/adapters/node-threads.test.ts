import { describe, expect, it } from "vitest";
import { nodeThreadSpawner } from "./node-threads.ts";

describe("nodeThreadSpawner", () => {
  it("runs a TypeScript entry as a plain-JS bundle (no TypeScript loader in the thread)", async () => {
    const port = nodeThreadSpawner<{ n: number }, { n: number; workerData: unknown }>(new URL("./testdata/echo-thread.ts", import.meta.url))();
    try {
      const reply = new Promise<{ n: number; workerData: unknown }>((resolve, reject) => port.listen(resolve, reject));
      port.post({ n: 1 });
      const { n, workerData } = await reply;
      expect(n).toBe(2);
      // Started from the bundle itself, not through node-thread-boot.mjs (which gets { entry }).
      expect(workerData).toBeNull();
    } finally {
      port.terminate();
    }
  });
});
