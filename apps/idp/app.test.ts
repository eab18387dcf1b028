/** The app over a shared store whose database is down: liveness still answers, the rest fails closed. */
import { describe, expect, it } from "vitest";
import { createLogger } from "#lib/log";
import { createApp, createIdp } from "./app.ts";
import { MemoryStateStore } from "./state/memory.ts";
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
  groupEntries: down,
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

describe("two instances on a shared store, each reading the settings once per turn of the event loop", () => {
  it("the requests of one turn share one read; a change at the other instance is seen by the next request", async () => {
    // One memory store standing in for a database: shared, and counting the reads of the settings.
    const store = new MemoryStateStore();
    let settingsReads = 0;
    const entries: IdpStateStore["entries"] = (kind) => ((settingsReads += kind === "setting" ? 1 : 0), store.entries(kind));
    const shared = new Proxy(store, {
      get: (target, name) => {
        if (name === "shared") return true;
        if (name === "entries") return entries;
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as IdpStateStore;
    const logger = createLogger({ level: "silent" });
    const afterThisTurn = (run: () => void) => void setImmediate(run);
    const a = await createIdp({ issuer: "http://idp.test", state: shared, logger, afterThisTurn });
    const b = await createIdp({ issuer: "http://idp.test", state: shared, logger, afterThisTurn });
    const jwksAtB = () => b.app.request("http://idp.test/jwks");

    settingsReads = 0;
    const answers = await Promise.all(Array.from({ length: 5 }, jwksAtB));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(settingsReads).toBe(1);

    await a.provider.setJwksMode("500");
    expect((await jwksAtB()).status).toBe(500);
    expect(settingsReads).toBe(2);
  });
});

describe("two instances on a shared store, a change still being applied", () => {
  it("a request never finds the other instance's change half applied: a later read waits for the scenarios an earlier one is loading", async () => {
    // The second instance's reads of the scenarios wait at a gate, so its first read of the
    // changed settings is caught loading them.
    const store = new MemoryStateStore();
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let armed = false;
    let held = () => {};
    const entries: IdpStateStore["entries"] = async (kind) => {
      if (kind === "scenario" && armed) {
        held();
        await gate;
      }
      return store.entries(kind);
    };
    const sharedView = (gated: boolean) =>
      new Proxy(store, {
        get: (target, name) => {
          if (name === "shared") return true;
          if (name === "entries" && gated) return entries;
          const value = Reflect.get(target, name);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }) as IdpStateStore;
    const logger = createLogger({ level: "silent" });
    const afterThisTurn = (run: () => void) => void setImmediate(run);
    const a = await createIdp({ issuer: "http://idp.test", state: sharedView(false), logger, afterThisTurn });
    const b = await createIdp({ issuer: "http://idp.test", state: sharedView(true), logger, afterThisTurn });
    await b.provider.sync();

    await a.provider.addScenario({ login: "carol", password: "pw", claims: {}, omit_claims: [], category: "test" } as never);
    armed = true;
    const loading = new Promise<void>((r) => (held = r));
    const first = b.provider.sync();
    await loading; // b has read the new version and is loading the scenarios
    const second = b.provider.sync();
    // Only liveness: the gate opens once the second read is done, or after a while.
    void Promise.race([second, new Promise((r) => setTimeout(r, 200))]).then(() => release());
    await second;
    expect(b.provider.scenarios().get("carol"), "the scenario added before the second read began").toBeDefined();
    await first;
  });
});

describe("issuers by path switched off (IDP_ISSUERS_BY_PATH=off)", () => {
  it("a first path segment that is not the provider's own is a 404 again; on by default it is an issuer", async () => {
    const logger = createLogger({ level: "silent" });
    const off = createApp({ issuer: "http://idp.test", issuersByPath: false, logger });
    expect((await off.request("http://idp.test/tenant-a/.well-known/openid-configuration")).status).toBe(404);
    const on = createApp({ issuer: "http://idp.test", logger });
    const res = await on.request("http://idp.test/tenant-a/.well-known/openid-configuration");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { issuer: string }).issuer).toBe("http://idp.test/tenant-a");
  });
});

describe("issuers by path under the route host's mount (issuer {origin}/idp)", () => {
  it("/idp/tenant-a/... (prefix kept) and /tenant-a/... (prefix stripped) are the issuer <origin>/idp/tenant-a", async () => {
    const app = createApp({ issuer: "{origin}/idp", logger: createLogger({ level: "silent" }) });
    for (const path of ["/idp/tenant-a/.well-known/openid-configuration", "/tenant-a/.well-known/openid-configuration"]) {
      const res = await app.request(`http://host.test${path}`);
      expect(res.status, path).toBe(200);
      const body = (await res.json()) as { issuer: string; token_endpoint: string };
      expect(body.issuer, path).toBe("http://host.test/idp/tenant-a");
      expect(body.token_endpoint, path).toBe("http://host.test/idp/tenant-a/token");
    }
    // The mount's own issuer is unchanged, and its first segment names no issuer.
    const own = await app.request("http://host.test/idp/.well-known/openid-configuration");
    expect(((await own.json()) as { issuer: string }).issuer).toBe("http://host.test/idp");
    expect((await app.request("http://host.test/idp/jwks")).status).toBe(200);
  });
});
