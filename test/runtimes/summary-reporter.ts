/**
 * Prints one line per vitest project (unit, node, deno, workerd, and the IdP's pair, edge and
 * instances projects) with its pass and fail counts,
 * then a plain `N passed, N failed` total, so a reader sees at once that every runtime ran the
 * same contract.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class RuntimeSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = new Map<string, { passed: number; failed: number; skipped: number }>();
    for (const mod of testModules) {
      const name = mod.project.name || "default";
      const entry = counts.get(name) ?? { passed: 0, failed: 0, skipped: 0 };
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") entry.passed++;
        else if (state === "failed") entry.failed++;
        else entry.skipped++;
      }
      // A module that failed without a failed test (it did not load, or a hook failed and its tests
      // were skipped) counts as one failure, so the closing line never says 0 failed then.
      if (mod.state() === "failed" && ![...mod.children.allTests()].some((t) => t.result().state === "failed")) entry.failed++;
      counts.set(name, entry);
    }
    let passed = 0;
    let failed = 0;
    const lines = ["", "Per runtime:"];
    const width = Math.max(8, ...[...counts.keys()].map((n) => n.length));
    for (const [name, c] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`  ${name.padEnd(width)} ${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ""}`);
      passed += c.passed;
      failed += c.failed;
    }
    lines.push(`tests: ${passed} passed, ${failed} failed`);
    console.log(lines.join("\n"));
  }
}
