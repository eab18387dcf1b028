import { loadQuickJS } from "../lib/sandbox/index.ts";
import { loadScriptSandbox } from "../apps/routes/script/script-sandbox.ts";
const engine = await loadQuickJS();
const sb = await loadScriptSandbox(engine, { entry: "/app.js", files: { "/app.js": `const httpmod = require("httpmod"); const app = httpmod.app(); app.get("/hello").public().handle(() => "hello");` } }, { mountables: {}, assets: {}, staticFiles: false, services: {} });
const input = JSON.stringify({ request: { method: "GET", path: "/hello", headers: { host: "x", "user-agent": "autocannon", accept: "*/*" }, query: {}, params: {}, cookies: {}, ip: "127.0.0.1", body: null, rawBody: "", session: { id: "abc", isNew: true, cookieName: "routes_session" } }, routeName: "GET /hello" });
for (let round = 0; round < 3; round++) {
  const n = 20000; const t = performance.now();
  for (let i = 0; i < n; i++) await sb.dispatch(0, input);
  console.log(`${((performance.now() - t) / n * 1000).toFixed(1)} µs per dispatch`);
}
