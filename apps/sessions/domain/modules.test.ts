import { describe, expect, it } from "vitest";
import { checkModuleAllowed, parseModuleCatalog, sandboxHostEnv } from "./modules.ts";

describe("module catalog", () => {
  it("parses a comma-separated subset of the catalog and refuses other names", () => {
    expect(parseModuleCatalog(" fs, path ,fs")).toEqual(["fs", "path"]);
    expect(parseModuleCatalog("")).toEqual([]);
    expect(() => parseModuleCatalog("fs,child_process")).toThrow(/child_process/);
  });

  it("refuses built-ins and names outside the configured catalog", () => {
    expect(checkModuleAllowed("fs", ["fs"])).toBe("fs");
    expect(() => checkModuleAllowed("JSON", ["fs"])).toThrow(/built-in/);
    expect(() => checkModuleAllowed("path", ["fs"])).toThrow(expect.objectContaining({ code: "MODULE_NOT_ALLOWED" }));
  });
});

describe("sandbox host environment", () => {
  it("never offers the daemon's database credentials to env capabilities", () => {
    expect(sandboxHostEnv({ HOME: "/root", SESSIONS_DB: "libsql://x", SESSIONS_DB_AUTH_TOKEN: "secret", N: 1 })).toEqual({ HOME: "/root" });
  });

  it("never offers the access tokens (the session API's, the provider's debug interface's)", () => {
    expect(sandboxHostEnv({ HOME: "/root", SESSIONS_AUTH_TOKEN: "t1", IDP_DEBUG_TOKEN: "t2" })).toEqual({ HOME: "/root" });
    // In another service's process: its secrets too (the route host's, the provider's).
    const host = {
      HOME: "/root",
      ROUTES_SESSION_SECRET: "s",
      ROUTES_CLIENT_SECRET: "c",
      IDP_CLIENT_SECRET: "i",
      IDP_SIGNING_KEYS: "k",
      routes_db_auth_token: "t",
    };
    expect(sandboxHostEnv(host)).toEqual({ HOME: "/root" });
  });
});
