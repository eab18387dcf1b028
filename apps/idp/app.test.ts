/** The app over a shared store whose database is down: liveness still answers, the rest fails closed. */
import { describe, expect, it } from "vitest";
import { createLogger } from "../../lib/log.ts";
import { createApp } from "./app.ts";
import type { IdpStateStore } from "./state/store.ts";

const down = () => Promise.reject(new Error("database unreachable"));
const unreachable: IdpStateStore = {
  shared: true,
  get: down,
  set: down,
  add: down,
  take: down,
  swap: down,
  delete: down,
  deleteGroup: down,
  entries: down,
  clear: down,
  prune: down,
  close: async () => {},
};

describe("a shared state store that is unreachable", () => {
  it("/healthz still answers ok; a request that needs the state gets a 500 server_error, not a hang", async () => {
    const app = createApp({ issuer: "http://idp.test", state: unreachable, logger: createLogger({ level: "silent" }) });
    const health = await app.request("http://idp.test/healthz");
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("ok");
    const token = await app.request("http://idp.test/userinfo", { headers: { authorization: "Bearer x" } });
    expect(token.status).toBe(500);
    expect(await token.json()).toEqual({ error: "server_error", error_description: "internal error" });
  });
});
