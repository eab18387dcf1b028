/**
 * Shared by the Node test and the Deno check: a host whose handlers run on the given thread
 * spawner; one request spins for 2 s while ten others are asked in turn. Prints nothing; returns
 * what it saw.
 */
import { createRouteHost } from "../../core/host.ts";
import { type SpawnScriptThread, threadScriptRuntime } from "../runtime.ts";

const SCRIPT = `const app = require("httpmod").app();
app.get("/spin").public().handle(() => { const end = Date.now() + 2000; while (Date.now() < end) {} return "spun"; });
app.get("/fast/:n").public().handle((ctx) => "fast " + ctx.params.n);
app.get("/hang").public().handle(() => "x".repeat(1e8).indexOf("y"));`;

export async function responsiveness(spawn: SpawnScriptThread) {
  const host = createRouteHost({
    dev: true,
    runtime: (natives) => threadScriptRuntime(spawn, { natives, limits: { cpuMs: 5000, wallMs: 2500, memMb: 256 }, threads: 2, graceMs: 300 }),
  });
  await host.loadScript({ entry: "/app.js", files: { "/app.js": SCRIPT } });
  await host.ready();
  const get = async (path: string) => {
    const res = await host.fetch(new Request(`http://host.test${path}`));
    return { status: res.status, text: await res.text() };
  };
  await get("/fast/warm");
  await get("/fast/warm");
  let spinEnded = false;
  const spinning = get("/spin").finally(() => (spinEnded = true));
  await new Promise((r) => setTimeout(r, 100));
  const answers: string[] = [];
  for (let i = 0; i < 10; i++) answers.push((await get(`/fast/${i}`)).text);
  // All ten answered while the spin still ran: queued behind it, they would come after it.
  const answeredDuringSpin = !spinEnded;
  const spun = await spinning;
  await host.close();

  // A native operation QuickJS cannot interrupt (~1 s here) on a host whose handlers get 100 ms:
  // the watchdog replaces the thread, and the host keeps serving.
  const strict = createRouteHost({
    dev: true,
    runtime: (natives) => threadScriptRuntime(spawn, { natives, limits: { cpuMs: 100, wallMs: 100, memMb: 256 }, threads: 1, graceMs: 300 }),
  });
  await strict.loadScript({ entry: "/app.js", files: { "/app.js": SCRIPT } });
  const call = async (path: string) => {
    const res = await strict.fetch(new Request(`http://host.test${path}`));
    return { status: res.status, text: await res.text() };
  };
  const hung = await call("/hang");
  const after = await call("/fast/after");
  await strict.close();
  return { spun, answers, answeredDuringSpin, hung, after };
}
