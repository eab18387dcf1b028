/** Handlers on threads: a spinning handler never blocks the host, on Node and on Deno. */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { nodeThreadSpawner } from "#lib/adapters/node/threads";
import { runToEnd } from "#test/runtimes/processes.ts";
import { responsiveness } from "./testdata/responsiveness.ts";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

function expectResponsive(seen: Awaited<ReturnType<typeof responsiveness>>) {
  expect(seen.spun).toEqual({ status: 200, text: "spun" });
  expect(seen.answers).toEqual(Array.from({ length: 10 }, (_, i) => `fast ${i}`));
  expect(seen.answeredDuringSpin).toBe(true);
  expect([seen.duringWaits, seen.answeredDuringWaits]).toEqual(["fast w", true]);
  expect(seen.waited).toEqual(Array.from({ length: 5 }, () => "waited"));
  expect(seen.answersBesideSpin).toEqual(Array.from({ length: 5 }, (_, i) => `fast ${i}`));
  expect([seen.answeredBesideSpin, seen.spunAfterWait]).toEqual([true, { status: 200, text: "spun" }]);
  expect(seen.hung.status).toBe(500);
  expect(seen.hung.text).toContain("did not answer");
  expect(seen.after).toEqual({ status: 200, text: "fast after" });
}

describe("the thread runtime", () => {
  it("on Node: other routes answer while one spins for 2 s or handlers wait on timers; a hung thread is replaced", async () => {
    expectResponsive(await responsiveness(nodeThreadSpawner(new URL("../entries/node-thread.ts", import.meta.url))));
  });

  it("on Deno: the same, with Web Workers", async () => {
    const { code, stdout, stderr } = await runToEnd("node_modules/deno/deno", ["run", "-A", "apps/routes/script/testdata/deno-responsiveness.ts"], {
      cwd: ROOT,
    });
    expect(code, stderr).toBe(0);
    expectResponsive(JSON.parse(stdout.trim().split("\n").at(-1)!));
  });
});
