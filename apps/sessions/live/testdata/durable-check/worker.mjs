// Test worker for durable.test.ts: a small JSON API over durableRuntimes, so the test can drive
// the Durable Object class through wrangler dev. (JavaScript, so the `.wasm` import needs no
// TypeScript declaration.)
import wasmModule from "../../../../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm";
import { durableRuntimes, sessionRuntimeObject } from "../../durable.ts";

export const SessionRuntimeObject = sessionRuntimeObject({ wasmModule, worktrees: (env) => env.WORKTREES });

let runtimes;

export default {
  async fetch(request, env) {
    runtimes ??= durableRuntimes(env.SESSION_RUNTIME);
    const { pathname } = new URL(request.url);
    const body = request.method === "POST" ? await request.json() : undefined;
    try {
      switch (pathname) {
        case "/health":
          return Response.json({ status: "ok" });
        case "/seed":
          for (const [key, text] of Object.entries(body)) await env.WORKTREES.put(key, text);
          return Response.json({});
        case "/open":
          await runtimes.open(body);
          return Response.json({});
        case "/execute": {
          const started = Date.now();
          const events = [];
          const outcome = await runtimes.execute(body.sessionId, body.request, (event) => events.push({ ...event, at: Date.now() - started }));
          return Response.json({ events, outcome, at: Date.now() - started });
        }
        case "/close":
          await runtimes.close(body.sessionId);
          return Response.json({});
        case "/live":
          return Response.json(runtimes.liveIds());
      }
    } catch (err) {
      return Response.json({ error: { code: err.code, message: err.message } }, { status: 500 });
    }
    return new Response("not found", { status: 404 });
  },
};
