/** `sessions serve`'s settings: the same flags, variables and defaults as before the section, now with config files and profiles. */
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "#lib/config/flags";
import type { HostRuntime } from "#lib/runtime";
import { parseModuleCatalog } from "./domain/modules.ts";
import { loadSessionsConfig, SESSIONS_FLAGS, USAGE } from "./config.ts";

/** `serve` with these words, this environment and these files (paths relative to /work). */
async function load(argv: string[], env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const runtime = {
    env: { HOME: "/home/u", ...env },
    cwd: () => "/work",
    resolvePath: (base: string, path: string) => (path.startsWith("/") ? path : `${base}/${path}`),
    readTextFile: (path: string) => Promise.resolve(files[path]),
  } as unknown as HostRuntime;
  const args = parseCommandLine(["serve", ...argv], SESSIONS_FLAGS);
  return loadSessionsConfig(runtime, { positionals: [], flags: args.flags });
}

describe("the sessions section", () => {
  it("keeps the defaults", async () => {
    const { values, sources } = await load([]);
    expect(values).toEqual({
      addr: "127.0.0.1:3210",
      db: "file:./data/sessions.db",
      "library-dir": "./libraries",
      "worktree-roots": [],
      "auth-token": "",
      modules: "fs,path,http,env",
      threads: "2",
      "allowed-hosts": "",
    });
    expect(Object.values(sources).every((s) => s === "default")).toBe(true);
  });

  it("reads the same SESSIONS_* variables, and a flag beats its variable", async () => {
    const env = {
      SESSIONS_ADDR: "127.0.0.1:4000",
      SESSIONS_DB: ":memory:",
      SESSIONS_LIBRARY_DIR: "libs",
      SESSIONS_WORKTREE_ROOTS: "/a,/b",
      SESSIONS_AUTH_TOKEN: "0123456789abcdef0123",
      SESSIONS_MODULES: "path",
      SESSIONS_THREADS: "0",
      SESSIONS_ALLOWED_HOSTS: "dev.example.test",
    };
    const fromEnv = await load([], env);
    expect(fromEnv.values).toMatchObject({ addr: "127.0.0.1:4000", db: ":memory:", "worktree-roots": ["/a", "/b"], modules: "path", threads: "0" });
    expect(fromEnv.sources.threads).toBe("env:SESSIONS_THREADS");
    const flagged = await load(["--threads", "4", "--worktree-roots", "/c", "--worktree-roots", "/d,/e"], env);
    expect(flagged.values.threads).toBe("4");
    expect(flagged.sources.threads).toBe("flag:--threads");
    expect(flagged.values["worktree-roots"]).toEqual(["/c", "/d", "/e"]);
  });

  it("reads config files and profiles below the environment", async () => {
    const files = {
      "/work/sessions.yaml": "sessions:\n  threads: 3\n  modules: fs,path\n  addr: 127.0.0.1:3999\n",
      "/home/u/.config/sessions/profiles.yaml": "ci:\n  sessions:\n    db: ':memory:'\n    threads: 1\n",
    };
    const { values, sources, profile } = await load(["--config-file", "sessions.yaml", "--profile", "ci"], { SESSIONS_ADDR: "127.0.0.1:4001" }, files);
    expect(profile).toEqual({ name: "ci", source: "flag:--profile" });
    expect(values).toMatchObject({ threads: "3", modules: "fs,path", db: ":memory:", addr: "127.0.0.1:4001" });
    expect(sources).toMatchObject({ threads: "config:sessions.yaml", db: "profile:ci", addr: "env:SESSIONS_ADDR" });
  });

  it.each([
    [["--threads", "65"], {}, "threads from flag:--threads: expected a whole number from 0 to 64"],
    [[], { SESSIONS_THREADS: "two" }, "threads from env:SESSIONS_THREADS: expected a whole number from 0 to 64"],
    [["--modules", "fs,nope"], {}, "modules from flag:--modules: expected names from the catalog fs, path, http, env, comma-separated, or none"],
    [["--addr", "nowhere"], {}, "addr from flag:--addr: expected HOST:PORT"],
    [[], { SESSIONS_ALLOWED_HOSTS: "a b" }, "allowed-hosts from env:SESSIONS_ALLOWED_HOSTS: expected host names, .domain or *"],
  ])("refuses %j %j with CONFIG_INVALID_VALUE naming the source", async (argv, env, message) => {
    await expect(load(argv, env)).rejects.toMatchObject({ code: "CONFIG_INVALID_VALUE", message: expect.stringContaining(message) });
  });

  it("refuses an unknown flag and an unknown field in a config file", async () => {
    await expect(load(["--thread", "2"])).rejects.toMatchObject({ code: "CONFIG_UNKNOWN_FLAG" });
    await expect(load(["--config-file", "x.yaml"], {}, { "/work/x.yaml": "sessions:\n  thread: 2\n" })).rejects.toMatchObject({ code: "CONFIG_UNKNOWN_FIELD" });
  });

  it('takes "" (a flag, a file or the environment) or none for no modules', async () => {
    expect(parseModuleCatalog((await load(["--modules", ""])).values.modules)).toEqual([]);
    expect(parseModuleCatalog((await load([], { SESSIONS_MODULES: "" })).values.modules)).toEqual([]);
    expect(parseModuleCatalog((await load([], {})).values.modules)).toEqual(["fs", "path", "http", "env"]);
    expect(parseModuleCatalog((await load([], { SESSIONS_MODULES: "none" })).values.modules)).toEqual([]);
  });

  it("lists every flag with its variable in --help", () => {
    for (
      const [flag, env] of [["addr", "SESSIONS_ADDR"], ["worktree-roots", "SESSIONS_WORKTREE_ROOTS"], ["auth-token", "SESSIONS_AUTH_TOKEN"], [
        "threads",
        "SESSIONS_THREADS",
      ]]
    ) {
      expect(USAGE).toMatch(new RegExp(`--${flag} +${env} `));
    }
    expect(USAGE).toContain("--config-file PATH");
  });
});
