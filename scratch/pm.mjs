import { Worker } from "node:worker_threads";
const w = new Worker(`const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m));`, { eval: true });
const payload = JSON.stringify({ request: { method: "GET", path: "/hello", headers: { host: "127.0.0.1:8131", "user-agent": "autocannon", accept: "*/*", connection: "keep-alive" }, query: {}, params: {}, cookies: {}, ip: "127.0.0.1", body: null, rawBody: "", session: { id: "0123456789abcdef0123456789abcdef", isNew: true, cookieName: "routes_session" } }, routeName: "GET /hello" });
for (const batch of [1, 4]) {
  const n = 40000; let got = 0;
  const t = process.cpuUsage(); const t0 = performance.now();
  await new Promise((resolve) => {
    w.on("message", function on(m) { got += batch; if (got >= n) { w.off("message", on); resolve(); } });
    for (let i = 0; i < n; i += batch) w.postMessage(batch === 1 ? { t: "call", id: i, req: { op: "dispatch", handler: 0, input: payload } } : { t: "batch", messages: Array.from({ length: batch }, (_, j) => ({ t: "call", id: i + j, req: { op: "dispatch", handler: 0, input: payload } })) });
  });
  const cpu = process.cpuUsage(t);
  console.log(`batch ${batch}: ${((performance.now() - t0) / n * 1000).toFixed(1)} µs wall/msg, ${((cpu.user + cpu.system) / n).toFixed(1)} µs process CPU/msg`);
}
w.terminate();
