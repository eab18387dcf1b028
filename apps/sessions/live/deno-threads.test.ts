import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

it("the Deno thread pool runs sessions in Web Workers and keeps the main thread free", async () => {
  const worktree = await mkdtemp(join(tmpdir(), "deno-pool-"));
  try {
    await writeFile(join(worktree, "util.js"), "exports.answer = 42;");
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        "node_modules/deno/deno",
        ["run", "-A", "apps/sessions/live/testdata/deno-threads-check.ts", worktree],
        { cwd: ROOT, timeout: 60_000 },
        (err, out, errOut) => err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out),
      )
    );
    const seen = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(seen).toMatchObject({
      first: { events: ["input_echo", "console", "value"], console: "42 x", value: "exports.answer = 42;" },
      file: "42",
      busy: "SESSION_BUSY",
      other: "b answers",
      looped: "looped",
    });
    expect(seen.worstLatenessMs).toBeLessThan(50);
  } finally {
    await rm(worktree, { recursive: true, force: true });
  }
});
