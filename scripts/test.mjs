// `node scripts/test.mjs [vitest args]`: runs `vitest run` with a mark in its environment that
// every process the suite starts inherits (test/runtimes/processes.ts), then checks that none of
// them outlived the run. Whatever failed or timed out, a leftover is ended here, named, and fails
// the run: a suite that leaks servers slows every run after it.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const MARK = "DEVSERVICES_TEST_RUN";
const run = randomUUID();
const root = fileURLToPath(new URL("..", import.meta.url));
const started = Date.now();

const vitest = spawn(process.execPath, [`${root}node_modules/vitest/vitest.mjs`, "run", ...process.argv.slice(2)], {
  cwd: root,
  env: { ...process.env, [MARK]: run },
  stdio: "inherit",
});
// Ctrl-C reaches vitest through the terminal's process group; a plain SIGTERM to us is passed on.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => vitest.kill(signal));
const status = await new Promise((resolve) => vitest.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));

const leftovers = await survivors();
if (leftovers.length > 0) {
  console.error(`\n${leftovers.length} process(es) started by the tests outlived the run; ending them:`);
  for (const p of leftovers) console.error(`  ${p.pid} (group ${p.pgrp}): ${p.command}`);
  // Their groups (wrangler with its workerd), except the group this script is in itself: a vitest
  // worker left over shares it, and ending that group would end this check before the others.
  const own = ownGroup();
  for (const target of [...new Set(leftovers.map((p) => p.pgrp).filter((g) => g !== own).map((g) => -g)), ...leftovers.map((p) => p.pid)]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // gone already
    }
  }
}
const seconds = Math.round((Date.now() - started) / 1000);
console.log(`vitest took ${Math.floor(seconds / 60)} min ${seconds % 60} s; processes left behind: ${leftovers.length}`);
process.exit(status !== 0 ? status : leftovers.length > 0 ? 1 : 0);

/**
 * The processes with this run's mark that are still running. One that is on its way out (a
 * group that got its signal as vitest ended) is given a moment before it counts.
 */
async function survivors() {
  let found = marked();
  for (let waited = 0; found.length > 0 && waited < 2000; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    found = marked();
  }
  return found;
}

function ownGroup() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}

function marked() {
  let names;
  try {
    names = readdirSync("/proc");
  } catch {
    return []; // no /proc (not Linux): the per-file teardown is all there is
  }
  const needle = `${MARK}=${run}`;
  const out = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z") continue;
      if (!readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(needle)) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 200);
      out.push({ pid: Number(name), pgrp: Number(pgrp), command });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}
