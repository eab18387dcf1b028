import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runToEnd } from "#test/runtimes/processes.ts";
import { nodeThreadSpawner } from "./threads.ts";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

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

  it("with startOne, hands out a thread started in advance, which keeps no process alive until then", async () => {
    const spawn = nodeThreadSpawner<{ n: number }, { n: number }>(new URL("./testdata/echo-thread.ts", import.meta.url), { startOne: true });
    const port = spawn();
    try {
      const reply = new Promise<{ n: number }>((resolve, reject) => port.listen(resolve, reject));
      port.post({ n: 41 });
      expect((await reply).n).toBe(42);
    } finally {
      port.terminate();
    }
    // A process that starts one and never uses it ends as if it had none.
    const code = `import { nodeThreadSpawner } from "./lib/adapters/node/threads.ts";
nodeThreadSpawner(new URL("./lib/adapters/node/testdata/echo-thread.ts", "file://${ROOT}/"), { startOne: true });
console.log("done");`;
    const out = await runToEnd(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: ROOT });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe("done");
  });
});
