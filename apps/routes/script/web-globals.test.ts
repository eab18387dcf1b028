/**
 * The web globals in a route handler, handlers in this process (as on workerd): the
 * web-platform-tests data (test/fixtures/wpt/) run by the handler, and the contract's smoke
 * script. Over HTTP on every runtime: test/contract/routes-web.test.ts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { expectWptPassed, SMOKE_EXPECTED, WPT_SUITES } from "#test/fixtures/wpt/contract.ts";
import { WPT_RUNNER_SOURCE, wptData } from "#test/fixtures/wpt/data.ts";
import { call, scriptHost } from "../testing.ts";

const read = (p: string) => readFileSync(new URL(p, import.meta.url), "utf8");

describe("web globals in a route handler (in process)", () => {
  it("runs the wpt data and the smoke script", async () => {
    const host = await scriptHost(read("../../../test/contract/fixtures/web/routes.js"), {
      limits: { cpuMs: 30_000, wallMs: 60_000 },
      extraFiles: { "/runner.js": WPT_RUNNER_SOURCE, "/smoke.js": read("../../../test/contract/fixtures/web/smoke.js") },
    });
    try {
      const smoke = await call(host, "GET", "/web?q=a%20b");
      expect(smoke.json).toEqual(SMOKE_EXPECTED);
      for (const suite of WPT_SUITES) {
        const r = await call(host, "POST", "/wpt", { body: JSON.stringify(wptData([suite])), headers: { "content-type": "application/json" } });
        expect(r.status, r.text).toBe(200);
        expectWptPassed(suite, r.json);
      }
    } finally {
      await host.close();
    }
  }, 120_000);
});
