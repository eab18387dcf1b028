/** What host file-system errors become (the same on Node and Deno: both carry the POSIX code). */
import { describe, expect, it } from "vitest";
import { type HostFileSystem, hostFileTree } from "./host.ts";

/** A host whose root `/r` is a directory holding `f`, and every read fails with `code`. */
function failing(code: string): HostFileSystem {
  const fail = async (): Promise<never> => {
    throw Object.assign(new Error(`${code}: refused`), { code });
  };
  return {
    realPath: async (p) => p,
    lstatKind: async (p) => (p === "/r" ? "directory" : "file"),
    readText: fail,
    readBytes: fail,
    writeText: fail,
    makeDirectory: fail,
    readDir: fail,
    removeFile: fail,
    removeTree: fail,
  };
}

describe("host file-system errors", () => {
  it.each([
    ["ENAMETOOLONG", "INVALID_PATH"],
    ["EACCES", "INVALID_PATH"],
    ["EPERM", "INVALID_PATH"],
    ["EINVAL", "INVALID_PATH"],
    ["EROFS", "INVALID_PATH"],
    ["ERR_INVALID_ARG_VALUE", "INVALID_PATH"],
    ["ENOENT", "FILE_NOT_FOUND"],
    ["ENOTDIR", "FILE_NOT_FOUND"],
    ["ELOOP", "FILE_NOT_FOUND"],
    ["EISDIR", "NOT_A_FILE"],
  ])("%s is %s, naming only the caller's path", async (code, expected) => {
    const tree = hostFileTree(failing(code));
    const err = await tree.readText("/r", "f").catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "FileTreeError", code: expected });
    expect((err as Error).message).not.toContain("/r/");
    await expect(tree.writeText("/r", "f", "x")).rejects.toMatchObject({ code: expected });
  });

  it("a failure of the host itself (I/O, no space) stays an error", async () => {
    for (const code of ["EIO", "ENOSPC", "EMFILE"]) {
      await expect(hostFileTree(failing(code)).readText("/r", "f")).rejects.toMatchObject({ code });
    }
  });
});
