/** Roots judged on real paths: the logic, over a host whose real paths are a table. (The same
 * over a real file system, with real symlinks: lib/adapters/node/files.test.ts.) */
import { describe, expect, it } from "vitest";
import { defaultRootDirs, hostRoots, pathInside, realLocation, refuseTooBroad, RootsError } from "./roots.ts";

/** Existing paths and their real paths (`/link` is a symlink to `/etc`, `/tmp` to `/private/tmp`). */
const REAL: Record<string, string> = {
  "/": "/",
  "/etc": "/etc",
  "/home": "/home",
  "/home/me": "/home/me",
  "/home/me/work": "/home/me/work",
  "/home/me/work/link": "/etc",
  "/home/me/work/a": "/home/me/work/a",
  "/tmp": "/private/tmp",
  "/private": "/private",
  "/private/tmp": "/private/tmp",
};
const realPath = async (p: string) => REAL[p.length > 1 ? p.replace(/\/+$/, "") : p];

describe("pathInside", () => {
  it("is the root itself or below it on a segment boundary", () => {
    expect(pathInside("/home/me/work", "/home/me/work")).toBe(true);
    expect(pathInside("/home/me/work", "/home/me/work/a/b")).toBe(true);
    expect(pathInside("/home/me/work", "/home/me/workshop")).toBe(false);
    expect(pathInside("/home/me/work", "/home/me")).toBe(false);
  });
});

describe("realLocation", () => {
  it("resolves the deepest existing ancestor and applies the rest by name", async () => {
    expect(await realLocation(realPath, "/home/me/work/a")).toBe("/home/me/work/a");
    expect(await realLocation(realPath, "/home/me/work/link")).toBe("/etc");
    expect(await realLocation(realPath, "/home/me/work/link/passwd")).toBe("/etc/passwd");
    expect(await realLocation(realPath, "/tmp/new/dir")).toBe("/private/tmp/new/dir");
    expect(await realLocation(realPath, "/home/me/work/missing/../../..")).toBe("/home");
    expect(await realLocation(realPath, "/nowhere/x")).toBe("/nowhere/x");
    expect(await realLocation(realPath, "/home/me/work/./a/")).toBe("/home/me/work/a");
  });
});

describe("hostRoots", () => {
  it("contains what resolves inside a root, and nothing that resolves outside", async () => {
    const roots = await hostRoots(realPath, ["/home/me/work", "/tmp"], "/home/me");
    expect(roots.roots).toEqual(["/home/me/work", "/private/tmp"]);
    for (const inside of ["/home/me/work", "/home/me/work/a", "/home/me/work/a/new", "/tmp", "/tmp/x", "/private/tmp/x/"]) {
      expect(await roots.contains(inside), inside).toBe(true);
    }
    for (
      const outside of ["/etc", "/", "/home/me", "/home/me/work/link", "/home/me/work/link/passwd", "/home/me/work/../.ssh", "/home/me/workshop", "/never/made"]
    ) {
      expect(await roots.contains(outside), outside).toBe(false);
    }
  });

  it("refuses / and the home directory as roots, a missing one, a relative one, none at all", async () => {
    await expect(hostRoots(realPath, ["/"])).rejects.toThrow(/whole file system/);
    await expect(hostRoots(realPath, ["/home/me/work/link/.."])).rejects.toThrow(RootsError);
    await expect(hostRoots(realPath, ["/home/me"], "/home/me")).rejects.toThrow(/home directory as a whole/);
    await expect(hostRoots(realPath, ["/gone"])).rejects.toThrow(/does not exist/);
    await expect(hostRoots(realPath, ["work"])).rejects.toThrow(/not an absolute path/);
    await expect(hostRoots(realPath, [])).rejects.toThrow(/no root/);
  });
});

describe("defaultRootDirs", () => {
  it("the start directory and the temp directory, but never / or the home directory", async () => {
    expect(await defaultRootDirs(realPath, "/home/me/work", "/tmp", "/home/me")).toEqual(["/home/me/work", "/tmp"]);
    expect(await defaultRootDirs(realPath, "/home/me", "/tmp", "/home/me")).toEqual(["/tmp"]);
    expect(await defaultRootDirs(realPath, "/", "/tmp", "/home/me")).toEqual(["/tmp"]);
  });
});

describe("refuseTooBroad", () => {
  it("refuses a directory that is / or the home directory once resolved; a missing or narrower one passes", async () => {
    await expect(refuseTooBroad(realPath, "/", "/home/me", "the library directory")).rejects.toThrow(/the library directory \/ is the whole file system/);
    await expect(refuseTooBroad(realPath, "/home/me", "/home/me", "the library directory")).rejects.toThrow(/home directory as a whole/);
    await expect(refuseTooBroad(realPath, "/home/me/work", "/home/me", "x")).resolves.toBeUndefined();
    await expect(refuseTooBroad(realPath, "/not/made/yet", "/home/me", "x")).resolves.toBeUndefined();
  });
});
