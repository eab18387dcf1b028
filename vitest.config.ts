import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** Every file ends the processes it started (test/runtimes/processes.ts); inline projects do not
 * inherit the root's settings, so each carries it. */
const setupFiles = ["./test/runtimes/setup.ts"];

/** The suites that drive servers share their worker between files (vitest's `isolate: false`):
 * a fresh worker and module graph per file cost a fifth of the node project's time. They share
 * nothing else: each file starts its own servers and ends them (setup.ts), stubs no global and
 * keeps its state in its servers. Unit tests stay isolated (they stub and mock). */
const isolate = false;

// The contract suites run once per runtime; unit tests (beside the code) run once, on Node.
const contract = (runtime: "node" | "deno" | "workerd") => ({
  test: {
    name: runtime,
    include: ["test/contract/**/*.test.ts"],
    env: { TEST_RUNTIME: runtime },
    setupFiles,
    isolate,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});

/** The provider's contract suites against two instances on one state database (round-robin). */
const pair = (runtime: "node" | "deno") => ({
  test: {
    name: `${runtime}-pair`,
    include: ["test/contract/idp-*.test.ts"],
    env: { TEST_RUNTIME: runtime, TEST_IDP_INSTANCES: "2" },
    setupFiles,
    isolate,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});

/** The code-flow suites against apps/idp/entries/edge.ts: under `deno serve` with a database file, and as a
 * module Worker with a libSQL server (test/fixtures/hrana-server.ts). */
const edge = (runtime: "deno" | "workerd") => ({
  test: {
    name: `${runtime}-edge`,
    include: [
      "test/contract/idp-code-flow.test.ts",
      "test/contract/idp-code-flow-clients.test.ts",
      "test/contract/idp-registration.test.ts",
      "test/contract/idp-par.test.ts",
      "test/contract/idp-client-auth-jwt.test.ts",
      "test/contract/idp-algorithms.test.ts",
    ],
    env: { TEST_RUNTIME: runtime, TEST_IDP_ENTRY: "edge" },
    setupFiles,
    isolate,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});

/** Requests generated from each product's own schemas, mutated, against Node servers (test/fuzz/):
 * a bounded case count per suite, a printed seed (FUZZ_SEED to replay, FUZZ_RUNS to scale). */
const fuzz = {
  test: {
    name: "fuzz",
    setupFiles,
    include: ["test/fuzz/**/*.fuzz.test.ts"],
    isolate,
    env: { TEST_RUNTIME: "node" },
    // A minute per suite at the default counts, more for a scaled local run.
    testTimeout: 60_000 * Math.max(1, Number(process.env.FUZZ_RUNS ?? 1) || 1),
    // Room for a server's first start (START_MS in test/fuzz/fuzz.ts) and a suite's fixtures.
    hookTimeout: 120_000,
  },
};

export default defineConfig({
  test: {
    reporters: ["default", "./test/runtimes/summary-reporter.ts"],
    // Two files at a time on any machine: a contract file spends most of its time waiting for a
    // server in another process, so one at a time left a 2-core machine half idle (vitest's
    // default is one worker fewer than the cores).
    maxWorkers: 2,
    projects: [
      // examples/ import the package by name, as another project does; here it is the source.
      {
        resolve: { alias: { "devservices/idp/testing": fileURLToPath(new URL("./apps/idp/testing.ts", import.meta.url)) } },
        test: {
          name: "unit",
          include: [
            "lib/**/*.test.ts",
            "apps/**/*.test.ts",
            "test/browser/**/*.test.ts",
            "examples/**/*.test.ts",
            "test/package/**/*.test.ts",
            "test/runtimes/**/*.test.ts",
          ],
          setupFiles,
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      contract("node"),
      contract("deno"),
      contract("workerd"),
      pair("node"),
      pair("deno"),
      edge("deno"),
      edge("workerd"),
      fuzz,
      { test: { name: "instances", include: ["test/instances/**/*.test.ts"], setupFiles, isolate, testTimeout: 30_000, hookTimeout: 120_000 } },
    ],
  },
});
