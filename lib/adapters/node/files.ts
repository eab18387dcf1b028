/** The host file system as a FileTree on Node (confinement rules, and what each host error
 * becomes, in lib/files/host.ts). */
import { lstat, mkdir, readdir, readFile, realpath, rm, unlink, writeFile } from "node:fs/promises";
import type { Dirent, Stats } from "node:fs";
import { tmpdir } from "node:os";
import { type FileTree, type HostEntryKind, hostErrorKind, hostFileTree, type HostPaths } from "#lib/files";

function kindOf(s: Stats | Dirent): HostEntryKind {
  return s.isSymbolicLink() ? "symlink" : s.isFile() ? "file" : s.isDirectory() ? "directory" : "other";
}

const missing = (err: unknown) => hostErrorKind(err) === "missing";

async function realPath(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch (err) {
    if (missing(err)) return undefined;
    throw err;
  }
}

/** Real paths and the temporary directory (`os.tmpdir()`: `$TMPDIR`, else `/tmp`). */
export function nodeHostPaths(): HostPaths {
  return { realPath, tempDirectory: () => tmpdir() };
}

export function nodeFileTree(): FileTree {
  return hostFileTree({
    realPath,
    async lstatKind(path) {
      try {
        return kindOf(await lstat(path));
      } catch (err) {
        if (missing(err)) return undefined;
        throw err;
      }
    },
    readText: (path) => readFile(path, "utf8"),
    readBytes: async (path) => new Uint8Array(await readFile(path)),
    writeText: (path, text) => writeFile(path, text, "utf8"),
    async makeDirectory(path) {
      try {
        await mkdir(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    },
    async readDir(path) {
      return (await readdir(path, { withFileTypes: true })).map((d) => ({ name: d.name, kind: kindOf(d) }));
    },
    removeFile: (path) => unlink(path),
    removeTree: (path) => rm(path, { recursive: true }),
  });
}
