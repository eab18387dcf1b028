import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { runToEnd } from "#test/runtimes/processes.ts";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

it("the Deno thread pool runs sessions in Web Workers and keeps the main thread free", async () => {
  const worktree = await mkdtemp(join(tmpdir(), "deno-pool-"));
  try {
    await writeFile(join(worktree, "util.js"), "exports.answer = 42;");
    const { code, stdout, stderr } = await runToEnd("node_modules/deno/deno", ["run", "-A", "apps/sessions/live/testdata/deno-threads-check.ts", worktree], {
      cwd: ROOT,
    });
    expect(code, stderr).toBe(0);
    const seen = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(seen).toMatchObject({
      first: { events: ["input_echo", "console", "value"], console: "42 x", value: "exports.answer = 42;" },
      file: "42",
      busy: "SESSION_BUSY",
      other: "b answers",
      looped: "looped",
      answeredDuringLoop: true,
    });
    // The main thread's 10 ms timer kept running through the 1.5 s loop (blocked: 0 or 1 ticks).
    expect(seen.mainThreadTicks).toBeGreaterThanOrEqual(20);
  } finally {
    await rm(worktree, { recursive: true, force: true });
  }
});
