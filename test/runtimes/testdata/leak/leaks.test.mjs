// Starts a process in a group of its own and never stops it; its pid goes to LEAK_PID_FILE.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { it } from "vitest";

it("leaves a process running", () => {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 120000)"], { detached: true, stdio: "ignore" });
  child.unref();
  writeFileSync(process.env.LEAK_PID_FILE, String(child.pid));
});
