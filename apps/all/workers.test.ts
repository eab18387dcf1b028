/**
 * `npm run worker:idp`, `worker:sessions` and `worker:routes` started at the same moment: each
 * names its own server port and its own inspector port (wrangler's default inspector port is the
 * same 9229 for all, so the second one used to die with "Address already in use"), and all three
 * answer. The scripts run as package.json has them, with free ports put in place of the ones they
 * name (so a developer's own Workers on this machine do not matter) and a fresh --persist-to.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answersOk, startProcess, stopAllProcesses, waitUntilReady } from "#test/runtimes/processes.ts";
import { freePort, ROOT } from "#test/runtimes/service.ts";

const SCRIPTS = { idp: "/healthz", sessions: "/api/v1/health", routes: "/" } as const;
type Name = keyof typeof SCRIPTS;

let state: string | undefined;
afterAll(async () => {
  await stopAllProcesses();
  if (state) await rm(state, { recursive: true, force: true });
});

const flag = (script: string, name: string) => Number(new RegExp(`--${name} (\\d+)`).exec(script)?.[1]);

describe("the worker:* scripts", () => {
  // Three wrangler builds and starts at once: minutes on a busy 2-core machine, seconds on a quiet one.
  it("each names its own port and inspector port, and all three started at once answer", { timeout: 240_000 }, async () => {
    const scripts = (JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    const names = Object.keys(SCRIPTS) as Name[];
    const ports = names.map((n) => [flag(scripts[`worker:${n}`]!, "port"), flag(scripts[`worker:${n}`]!, "inspector-port")] as const);
    const all = ports.flat();
    expect(all.every((p) => Number.isInteger(p)), JSON.stringify(ports)).toBe(true);
    expect(new Set(all).size).toBe(all.length);

    state = await mkdtemp(join(tmpdir(), "workers-"));
    const chosen = new Map<number, number>();
    for (const port of all) chosen.set(port, await freePort());
    const started = names.map((name) => {
      // The script as written, its ports swapped for free ones (both flags), its state elsewhere.
      const script = scripts[`worker:${name}`]!.replace(/--(port|inspector-port) (\d+)/g, (_, f: string, p: string) => `--${f} ${chosen.get(Number(p))}`);
      const child = startProcess("sh", ["-c", `${script} --persist-to ${join(state!, name)} --show-interactive-dev-session=false`], {
        cwd: ROOT,
        env: { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}${delimiter}${process.env.PATH}`, NO_COLOR: "1" },
      });
      return { name, child, url: `http://127.0.0.1:${flag(script, "port")}${SCRIPTS[name]}` };
    });

    // Each answers 200 (not a redirect) on its page, or the test fails with the output of the one that exited.
    await Promise.all(started.map(({ name, child, url }) => waitUntilReady(child, () => answersOk(url, { redirect: "manual" }), `worker:${name}`)));
    for (const { child } of started) expect(child.hasExited(), child.output()).toBe(false);
  });
});
