/**
 * The web globals against the web platform's own test data (test/fixtures/wpt/), run inside a
 * sandbox. The pass counts are recorded in docs/sandbox.md.
 */
import { describe, expect, it } from "vitest";
import { WPT_RUNNER_SOURCE, wptData, wptPassed, type WptSuiteResult } from "#test/fixtures/wpt/data.ts";
import { sandboxesPerTest } from "./testing.ts";

const { sandbox } = sandboxesPerTest();

describe("web-platform-tests data inside the sandbox", () => {
  it("passes >= 99% of URL parsing, setter and IDNA cases, and every base64 and UTF-8 case", async () => {
    const s = sandbox({ limits: { cpuMs: 60_000, wallMs: 120_000 } });
    expect((await s.evaluate(WPT_RUNNER_SOURCE, { mode: "script" })).status).toBe("ok");
    const r = await s.call("wptRun", [wptData() as never]);
    expect(r.error).toBeUndefined();
    const results = r.value?.json as unknown as Record<string, WptSuiteResult>;
    const summary = Object.entries(results).map(([name, x]) => `${name}: ${x.passed}/${x.total}${x.failures.length ? `\n  ${x.failures.join("\n  ")}` : ""}`);
    console.log(summary.join("\n"));
    expect(Object.keys(results).sort()).toEqual(["base64", "url", "url-setters", "url-toascii", "utf8"]);
    for (const [name, x] of Object.entries(results)) expect(wptPassed(name, x), `${name}: ${x.passed}/${x.total}\n${x.failures.join("\n")}`).toBe(true);
  }, 120_000);
});
