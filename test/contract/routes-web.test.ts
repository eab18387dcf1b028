/**
 * The web globals in a route handler, over HTTP on the project's runtime: the web-platform-tests
 * data (test/fixtures/wpt/) run inside the handler's sandbox, and the globals a handler uses most.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectWptPassed, SMOKE_EXPECTED, WPT_SUITES } from "../fixtures/wpt/contract.ts";
import { wptData } from "../fixtures/wpt/data.ts";
import { type RunningService, startService } from "../runtimes/service.ts";

let host: RunningService;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "routes-web-"));
  const here = (p: string) => new URL(p, import.meta.url);
  await writeFile(join(dir, "app.js"), await readFile(here("./fixtures/web/routes.js")));
  await writeFile(join(dir, "smoke.js"), await readFile(here("./fixtures/web/smoke.js")));
  await writeFile(join(dir, "runner.js"), await readFile(here("../fixtures/wpt/runner.js")));
  host = await startService("routes", {
    env: { ROUTES_SCRIPT: join(dir, "app.js"), ROUTES_DB: "none", ROUTES_DEV: "1", ROUTES_CPU_MS: "30000", ROUTES_WALL_MS: "60000" },
  });
}, 120_000);

afterAll(async () => {
  await host?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("web globals in a route handler", () => {
  it("URL, TextEncoder, crypto, structuredClone, atob and AbortController work", async () => {
    const res = await fetch(`${host.baseUrl}/web?q=a%20b`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(SMOKE_EXPECTED);
  });

  it.each(WPT_SUITES)("passes the wpt %s cases", async (suite) => {
    const res = await fetch(`${host.baseUrl}/wpt`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(wptData([suite])) });
    expect(res.status, await res.clone().text()).toBe(200);
    expectWptPassed(suite, await res.json());
  }, 60_000);
});
