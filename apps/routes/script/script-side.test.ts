/** The route side's sandboxes (script-side.ts), in process: handlers that wait do not hold up the rest. */
import { describe, expect, it } from "vitest";
import { loadQuickJS } from "#lib/sandbox";
import { createRouteHost } from "../host/host.ts";
import { call } from "../testing.ts";
import { nodeThreadSpawner } from "#lib/adapters/node/threads";
import { inProcessScriptRuntime, threadScriptRuntime } from "./runtime.ts";
import { DEFAULT_SCRIPT_LIMITS } from "./script-sandbox.ts";

// Each sandbox has its own globals: `sandbox` names the one a handler ran in.
const script = (version: string) =>
  `const app = require("httpmod").app();
const sandbox = "${version}-" + Math.random();
app.get("/wait").public().handle(async () => { await new Promise((r) => setTimeout(r, 500)); return sandbox; });
app.get("/now").public().handle(() => sandbox);`;

async function host(sandboxes?: number, onThread = false) {
  const engine = onThread ? undefined : await loadQuickJS();
  const h = createRouteHost({
    runtime: (natives, hostCalls) =>
      engine
        ? inProcessScriptRuntime(engine, { natives, hostCalls, limits: DEFAULT_SCRIPT_LIMITS, sandboxes })
        : threadScriptRuntime(nodeThreadSpawner(new URL("../entries/node-thread.ts", import.meta.url)), {
          natives,
          hostCalls,
          limits: DEFAULT_SCRIPT_LIMITS,
          threads: 1,
        }),
  });
  await h.loadScript({ entry: "/app.js", files: { "/app.js": script("v1") } });
  return h;
}
const text = async (h: Awaited<ReturnType<typeof host>>, path: string) => (await call(h, "GET", path)).text;

describe("the route side's sandboxes", () => {
  it("run a request in another sandbox while handlers wait, and reuse the warm one after", async () => {
    const h = await host();
    const order: string[] = [];
    const waits = [text(h, "/wait"), text(h, "/wait")].map((p) => p.then((id) => (order.push("wait"), id)));
    await new Promise((r) => setTimeout(r, 50));
    const now = await text(h, "/now");
    order.push("now");
    const waited = await Promise.all(waits);
    expect(order).toEqual(["now", "wait", "wait"]);
    expect(new Set([...waited, now]).size).toBe(3);
    // Sequential requests go to the most recently freed sandbox, one of the three.
    const next = await text(h, "/now");
    expect([...waited, now]).toContain(next);
    expect(await text(h, "/now")).toBe(next);
    await h.close();
  });

  it("on a thread, run a batch of handlers that do not wait in one sandbox, and open another for one that does", async () => {
    const h = await host(undefined, true);
    const ids = await Promise.all(Array.from({ length: 20 }, () => text(h, "/now")));
    expect(new Set(ids).size).toBe(1);
    const wait = text(h, "/wait");
    await new Promise((r) => setTimeout(r, 50));
    const beside = await text(h, "/now");
    expect(beside).not.toBe(await wait);
    await h.close();
  });

  it("keep at most `sandboxes`: past that a request waits for one to be free", async () => {
    const h = await host(1);
    const order: string[] = [];
    const wait = text(h, "/wait").then((id) => (order.push("wait"), id));
    await new Promise((r) => setTimeout(r, 50));
    const now = await text(h, "/now");
    order.push("now");
    expect(order).toEqual(["wait", "now"]);
    expect(await wait).toBe(now);
    await h.close();
  });

  it("let a waiting handler finish on its script after a reload; later requests get the new one", async () => {
    const h = await host();
    const waiting = text(h, "/wait");
    await new Promise((r) => setTimeout(r, 50));
    await h.loadScript({ entry: "/app.js", files: { "/app.js": script("v2") } });
    expect(await waiting).toMatch(/^v1-/);
    expect(await text(h, "/now")).toMatch(/^v2-/);
    expect(await text(h, "/wait")).toMatch(/^v2-/);
    await h.close();
  });

  it("answer a handler whose answer is not the dispatcher's, or too large to copy out, 500 HANDLER_FAILED in process and on a thread alike", async () => {
    const forged = `const app = require("httpmod").app();
app.get("/forged").public().handle(() => ({ then() { return "not a response"; } }));
app.get("/no-headers").public().handle(() => ({ then() { return '{"status":200,"headers":[5]}'; } }));
app.get("/too-large").public().handle(() => "\\u00e9".repeat(30 * 1024 * 1024));
app.get("/ok").public().handle(() => "ok");`;
    for (const onThread of [false, true]) {
      const engine = onThread ? undefined : await loadQuickJS();
      const h = createRouteHost({
        dev: true,
        runtime: (natives, hostCalls) =>
          engine
            ? inProcessScriptRuntime(engine, { natives, hostCalls, limits: DEFAULT_SCRIPT_LIMITS })
            : threadScriptRuntime(nodeThreadSpawner(new URL("../entries/node-thread.ts", import.meta.url)), {
              natives,
              hostCalls,
              limits: DEFAULT_SCRIPT_LIMITS,
              threads: 1,
            }),
      });
      await h.loadScript({ entry: "/app.js", files: { "/app.js": forged } });
      for (const path of ["/forged", "/no-headers", "/too-large"]) {
        const res = await call(h, "GET", path);
        expect([res.status, res.json?.error?.code], `${path} ${onThread ? "on a thread" : "in process"}: ${res.text}`).toEqual([500, "HANDLER_FAILED"]);
      }
      expect((await call(h, "GET", "/too-large")).json.error.message).toMatch(/too large/);
      expect((await call(h, "GET", "/ok")).text).toBe("ok");
      await h.close();
    }
  });
});
