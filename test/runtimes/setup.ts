/**
 * Runs in every test file (vitest `setupFiles`): once the file's own hooks are done, whatever they
 * did or failed to do, no process it started is left running (test/runtimes/processes.ts).
 */
import { afterAll } from "vitest";
import { stopAllProcesses } from "./processes.ts";

afterAll(stopAllProcesses);
