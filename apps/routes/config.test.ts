/** The `routes:` section decoded once: the command line and the Worker read the same values the same way. */
import { describe, expect, it } from "vitest";
import { ConfigError } from "#lib/config";
import type { HostRuntime } from "#lib/runtime";
import { loadConfig } from "./cli-config.ts";
import { DEFAULT_SCRIPT_LIMITS } from "./script/script-sandbox.ts";
import { auditSetting, routesSettingsFromVars, scriptLimits, securitySettings, trustedProxy } from "./config.ts";

/** The command line's view of `env`: no flags, no files. */
function cliSettings(env: Record<string, string>) {
  const runtime = {
    env,
    cwd: () => "/work",
    resolvePath: (base: string, path: string) => (path.startsWith("/") ? path : `${base}/${path}`),
    readTextFile: () => Promise.resolve(undefined),
  } as unknown as HostRuntime;
  return loadConfig(runtime, { positionals: [], flags: new Map() }, false);
}

/** Both decodings of `env`, as what the host is built from. */
async function both(env: Record<string, string>) {
  const cli = await cliSettings(env);
  const worker = routesSettingsFromVars(env);
  const built = (settings: { values: Parameters<typeof scriptLimits>[0] }) => ({
    limits: scriptLimits(settings.values),
    audit: auditSetting(settings.values),
    dev: settings.values.dev,
    security: securitySettings(settings.values, settings.values.issuer, undefined),
  });
  return { cli, worker, fromCli: built(cli), fromWorker: built(worker) };
}

describe("the routes section, on the command line and in the Worker", () => {
  it("reads an empty ROUTES_ISSUER as no authenticator on both, never as the default issuer", async () => {
    const { cli, worker } = await both({ ROUTES_ISSUER: "" });
    expect(cli.values.issuer).toBe("");
    expect(worker.values.issuer).toBe("");
  });

  it("has one set of defaults: audit auto (the store when there is one, else the log), the sandbox's limits", async () => {
    const { cli, worker, fromCli, fromWorker } = await both({});
    expect(fromWorker).toEqual(fromCli);
    expect(worker.values).toEqual(cli.values);
    expect(fromCli.audit).toBe("auto");
    expect(fromCli.limits).toEqual(DEFAULT_SCRIPT_LIMITS);
    expect(fromCli.security).toMatchObject({ issuer: "http://127.0.0.1:5556", clientId: "public-spa", signInRateLimit: { limit: 60, windowSeconds: 60 } });
  });

  it("decodes the same variables to the same values", async () => {
    const env = {
      ROUTES_CPU_MS: "300",
      ROUTES_WALL_MS: "1000",
      ROUTES_MEM_MB: "32",
      ROUTES_AUDIT: "log",
      ROUTES_DEV: "yes",
      ROUTES_ISSUER: "https://id.example",
      ROUTES_AUDIENCE: "a,b",
      ROUTES_CLIENT_ID: "web",
      ROUTES_INTROSPECTION_CLIENT_ID: "rs",
      ROUTES_INTROSPECTION_CLIENT_SECRET: "rs-secret",
      ROUTES_SIGN_IN_RATE_LIMIT: "5/10",
      ROUTES_DB: "none",
    };
    const { cli, worker, fromCli, fromWorker } = await both(env);
    expect(worker.values).toEqual(cli.values);
    expect(worker.sources).toEqual(cli.sources);
    expect(fromWorker).toEqual(fromCli);
    expect(fromCli).toMatchObject({
      limits: { cpuMs: 300, wallMs: 1000, memMb: 32 },
      audit: "log",
      dev: true,
      security: {
        audience: "a,b",
        clientId: "web",
        introspection: { clientId: "rs", clientSecret: "rs-secret" },
        signInRateLimit: { limit: 5, windowSeconds: 10 },
      },
    });
  });

  it.each([
    ["ROUTES_CPU_MS", "0", "cpu-ms from env:ROUTES_CPU_MS: expected a whole number from 1 to 600000"],
    ["ROUTES_WALL_MS", "600001", "wall-ms from env:ROUTES_WALL_MS: expected a whole number from 1 to 600000"],
    ["ROUTES_MEM_MB", "4096", "mem-mb from env:ROUTES_MEM_MB: expected a whole number from 1 to 2048"],
    ["ROUTES_CPU_MS", "5s", "cpu-ms from env:ROUTES_CPU_MS: expected a whole number from 1 to 600000"],
    ["ROUTES_AUDIT", "database", 'audit from env:ROUTES_AUDIT: expected "auto", "db", "log" or "off"'],
    ["ROUTES_DEV", "maybe", 'dev from env:ROUTES_DEV: expected true or false (got "maybe")'],
  ])("refuses %s=%s on both, naming the variable", async (name, value, message) => {
    const refusal = { code: "CONFIG_INVALID_VALUE", message, source: `env:${name}` };
    await expect(cliSettings({ [name]: value })).rejects.toMatchObject(refusal);
    expect(() => routesSettingsFromVars({ [name]: value })).toThrow(ConfigError);
    expect(() => routesSettingsFromVars({ [name]: value })).toThrow(message);
  });

  it("reads only the Worker's string vars (bindings are not settings); an empty var is unset, as on the command line", () => {
    const binding = { get: () => undefined };
    const { values, sources } = routesSettingsFromVars({ ROUTES_STORE: binding, ROUTES_DB: "", ROUTES_CPU_MS: "250" });
    expect(values.db).toBe("");
    expect(sources.db).toBe("default");
    expect(scriptLimits(values).cpuMs).toBe(250);
  });

  it("takes the platform's proxy when nothing set one: none on Node and Deno, cloudflare on workerd", async () => {
    const cli = await cliSettings({});
    expect(trustedProxy(cli, "none")).toEqual({ kind: "none" });
    expect(trustedProxy(routesSettingsFromVars({}), "cloudflare")).toEqual({ kind: "cloudflare" });
    expect(trustedProxy(routesSettingsFromVars({ ROUTES_TRUSTED_PROXY: "none" }), "cloudflare")).toEqual({ kind: "none" });
    expect(trustedProxy(await cliSettings({ ROUTES_TRUSTED_PROXY: "cloudflare" }), "none")).toEqual({ kind: "cloudflare" });
  });
});
