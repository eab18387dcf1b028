/**
 * `scripts/test.mjs`, the runner `npm test` uses, fails a run that leaves a process behind, names
 * it and ends it, whatever the suite did (here a suite that leaks one on purpose).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { groupAlive, runToEnd } from "./processes.ts";
import { ROOT } from "./service.ts";

it("fails the run, names the process and ends it", async () => {
  const dir = await mkdtemp(join(tmpdir(), "leak-check-"));
  try {
    const pidFile = join(dir, "pid");
    const run = await runToEnd(process.execPath, ["scripts/test.mjs", "--config", "test/runtimes/testdata/leak/vitest.config.mjs"], {
      cwd: ROOT,
      env: { ...process.env, LEAK_PID_FILE: pidFile },
    });
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain("1 process(es) started by the tests outlived the run; ending them:");
    expect(run.stderr).toContain(`${pid} (group ${pid})`);
    expect(run.stdout).toMatch(/processes left behind: 1/);
    // Gone, or a zombie no parent has reaped yet (it runs nothing).
    expect(groupAlive(pid)).toBe(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
