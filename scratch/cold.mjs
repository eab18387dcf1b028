import { spawn } from "node:child_process";
const port = 8140 + Math.floor(Math.random() * 50);
async function once(extraEnv = {}) {
  const t0 = performance.now();
  const p = spawn(process.execPath, ["lib/adapters/node-run.mjs", "apps/routes/node.ts", "serve", "--addr", `127.0.0.1:${port}`, "--script", "scratch/fifty.js"], { env: { ...process.env, LOG_LEVEL: "info", LOG_FORMAT: "json", ...extraEnv }, stdio: ["ignore", "pipe", "inherit"] });
  let listening;
  p.stdout.on("data", (d) => { if (!listening && String(d).includes("routes listening")) listening = performance.now() - t0; });
  let first;
  for (;;) { try { const r = await fetch(`http://127.0.0.1:${port}/r0/x`); if (r.ok) { await r.text(); first = performance.now() - t0; break; } } catch {} await new Promise((r) => setTimeout(r, 2)); }
  p.kill("SIGTERM"); await new Promise((r) => p.once("exit", r));
  return [Math.round(listening), Math.round(first)];
}
const node0 = performance.now(); await new Promise((r) => spawn(process.execPath, ["-e", ""]).once("exit", r)); console.log("node -e ''", Math.round(performance.now() - node0));
for (let i = 0; i < 6; i++) console.log("listening, first answer:", await once());
