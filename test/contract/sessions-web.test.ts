/**
 * The web globals in a session, over HTTP on the project's runtime: REPL executions run the
 * web-platform-tests data (test/fixtures/wpt/, files of the session's worktree) and use the
 * globals a script uses most.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectWptPassed, SMOKE_EXPECTED, WPT_SUITES } from "../fixtures/wpt/contract.ts";
import { wptData } from "../fixtures/wpt/data.ts";
import { createSession, expectOk, repl, type Sessions, startSessions } from "./sessions-helpers.ts";

let s: Sessions;
let session: { id: string };
beforeAll(async () => {
  s = await startSessions();
  const here = (p: string) => new URL(p, import.meta.url);
  const files: Record<string, string> = {
    "runner.js": await readFile(here("../fixtures/wpt/runner.js"), "utf8"),
    "smoke.js": await readFile(here("./fixtures/web/smoke.js"), "utf8"),
  };
  // JavaScript rather than .json files: a session's `require` loads JavaScript.
  for (const suite of WPT_SUITES) files[`wpt/${suite}.js`] = `module.exports = ${JSON.stringify(wptData([suite]))};`;
  session = await createSession(s, { settings: { limits: { cpu_ms: 30_000, wall_ms: 60_000 } } }, files);
}, 120_000);
afterAll(async () => {
  await s?.svc.stop();
});

const value = async (input: string) => {
  const e = expectOk(await repl(s, session.id, input), 201);
  expect(e.status, JSON.stringify(e.events)).toBe("ok");
  return e.result.json;
};

describe("web globals in a session", () => {
  it("URL, TextEncoder, crypto, structuredClone, atob and AbortController work", async () => {
    expect(await value("await require('./smoke.js')('a b')")).toEqual(SMOKE_EXPECTED);
  });

  it.each(WPT_SUITES)("passes the wpt %s cases", async (suite) => {
    expectWptPassed(suite, await value(`require('./runner.js')(require('./wpt/${suite}.js'))`));
  }, 60_000);
});
