/**
 * Shared by the Node test and the Deno check: a host whose handlers run on the given thread
 * spawner; one request spins for 2 s while ten others are asked in turn; then more handlers wait
 * on timers than there are threads while another request is answered, and one that waited and
 * then spins is kept apart from the rest. Prints nothing; returns what it saw.
 */
import { createRouteHost } from "../../host/host.ts";
import { type SpawnScriptThread, threadScriptRuntime } from "../runtime.ts";

const SCRIPT = `const app = require("httpmod").app();
app.get("/spin").public().handle(() => { const end = Date.now() + 2000; while (Date.now() < end) {} return "spun"; });
app.get("/fast/:n").public().handle((ctx) => "fast " + ctx.params.n);
app.get("/hang").public().handle(() => "x".repeat(1e8).indexOf("y"));
app.get("/wait").public().handle(async () => { await new Promise((r) => setTimeout(r, 2400)); return "waited"; });
app.get("/wait-then-spin").public().handle(async () => {
  await new Promise((r) => setTimeout(r, 100));
  const end = Date.now() + 1500; while (Date.now() < end) {}
  return "spun";
});`;

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

  // Five handlers wait on timers on two threads: the next request does not queue behind them.
  let aWaitEnded = false;
  const waits = Promise.all(Array.from({ length: 5 }, () => get("/wait").finally(() => (aWaitEnded = true))));
  await new Promise((r) => setTimeout(r, 100));
  const duringWaits = (await get("/fast/w")).text;
  const answeredDuringWaits = !aWaitEnded;
  // One that waited and now spins: its thread is silent, the others go to the other thread, whose
  // handlers only wait (they outlast the spin: without its heartbeat that thread would look stuck).
  const waitThenSpin = get("/wait-then-spin");
  await new Promise((r) => setTimeout(r, 300));
  let afterSpinEnded = false;
  void waitThenSpin.finally(() => (afterSpinEnded = true));
  const answersBesideSpin: string[] = [];
  for (let i = 0; i < 5; i++) answersBesideSpin.push((await get(`/fast/${i}`)).text);
  const answeredBesideSpin = !afterSpinEnded && !aWaitEnded;
  const waited = (await waits).map((r) => r.text);
  const spunAfterWait = await waitThenSpin;
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
  return { spun, answers, answeredDuringSpin, duringWaits, answeredDuringWaits, waited, answersBesideSpin, answeredBesideSpin, spunAfterWait, hung, after };
}
