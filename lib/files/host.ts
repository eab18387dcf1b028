/**
 * FileTree over a host file system (Node and Deno supply the primitives in `lib/adapters/`).
 *
 * Confinement: the relative path is checked by `resolveRelativePath`, then walked one segment at
 * a time from the root's real path. A symlink on the way (or at the end) is followed only when
 * its real path stays inside the root's real path; anything else is INVALID_PATH. So no path,
 * symlink or dangling link reaches a file outside the root.
 */
import { checkAbsolutePath, resolveRelativePath } from "./paths.ts";
import { type FileKind, type FileTree, FileTreeError } from "./tree.ts";

export type HostEntryKind = FileKind | "symlink" | "other";

/**
 * What a host file-system error means for the caller, by its `code` (Node's and Deno's errors
 * both carry the POSIX name): `missing` (nothing there: ENOENT, a parent that is not a
 * directory, a symlink loop), `invalid` (a name the host refuses or may not touch: too long, a
 * NUL byte, not permitted, read-only, an invalid argument), `directory` (EISDIR), or undefined for
 * a failure of the host itself (I/O, no space, too many open files), which stays an error.
 */
export function hostErrorKind(err: unknown): "missing" | "invalid" | "directory" | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
    case "ELOOP":
      return "missing";
    case "ENAMETOOLONG":
    case "EINVAL":
    case "EILSEQ":
    case "EACCES":
    case "EPERM":
    case "EROFS":
    case "EEXIST":
    case "ENOTEMPTY":
    case "EXDEV":
    case "ERR_INVALID_ARG_VALUE":
    case "ERR_INVALID_ARG_TYPE":
      return "invalid";
    case "EISDIR":
      return "directory";
    default:
      return undefined;
  }
}

const REASONS: Record<string, string> = {
  ENAMETOOLONG: "a name is too long",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EEXIST: "something is in the way",
  ENOTEMPTY: "the directory is not empty",
};

/** A host error as a FileTreeError (INVALID_PATH, FILE_NOT_FOUND, NOT_A_FILE), or as it is. */
export function fromHostError(err: unknown, rel: string): unknown {
  if (err instanceof FileTreeError) return err;
  const code = String((err as { code?: unknown } | null)?.code ?? "");
  switch (hostErrorKind(err)) {
    case "missing":
      return new FileTreeError("FILE_NOT_FOUND", `file not found: ${rel || "."}`);
    case "invalid":
      return new FileTreeError("INVALID_PATH", `invalid path ${JSON.stringify(rel)}: ${REASONS[code] ?? "the file system refuses it"}`);
    case "directory":
      return new FileTreeError("NOT_A_FILE", `not a file: ${rel || "."}`);
    default:
      return err;
  }
}

/** Wraps every primitive so a host error becomes a FileTreeError (see `fromHostError`). */
function guarded(fs: HostFileSystem, relOf: (path: string) => string): HostFileSystem {
  const wrap = <A extends unknown[], R>(f: (path: string, ...rest: A) => Promise<R>) => async (path: string, ...rest: A): Promise<R> => {
    try {
      return await f(path, ...rest);
    } catch (err) {
      throw fromHostError(err, relOf(path));
    }
  };
  return {
    realPath: wrap(fs.realPath),
    lstatKind: wrap(fs.lstatKind),
    readText: wrap(fs.readText),
    readBytes: wrap(fs.readBytes),
    writeText: wrap(fs.writeText),
    makeDirectory: wrap(fs.makeDirectory),
    readDir: wrap(fs.readDir),
    removeFile: wrap(fs.removeFile),
    removeTree: wrap(fs.removeTree),
  };
}

/** The primitives a runtime supplies. Paths are absolute; "missing" is `undefined`, never a throw. */
export interface HostFileSystem {
  /** The canonical path (symlinks resolved), or undefined when it (or its target) does not exist. */
  realPath(path: string): Promise<string | undefined>;
  /** What is at `path` without following a final symlink. */
  lstatKind(path: string): Promise<HostEntryKind | undefined>;
  readText(path: string): Promise<string>;
  readBytes(path: string): Promise<Uint8Array>;
  writeText(path: string, text: string): Promise<void>;
  /** Creates one directory; fine when it already exists. */
  makeDirectory(path: string): Promise<void>;
  /** Entries of a directory, kinds without following symlinks. */
  readDir(path: string): Promise<{ name: string; kind: HostEntryKind }[]>;
  /** Removes a file or a symlink. */
  removeFile(path: string): Promise<void>;
  /** Removes a directory and everything under it (symlinks inside are removed, never followed). */
  removeTree(path: string): Promise<void>;
}

interface Located {
  /** The path to operate on: inside the root, final symlink resolved (`link` keeps the link). */
  path: string;
  /** The path of the entry itself (the link when it is a symlink). */
  link: string;
  kind: HostEntryKind | undefined;
}

const escapes = (rel: string) => new FileTreeError("INVALID_PATH", `invalid path ${JSON.stringify(rel)}: it resolves outside the worktree`);
const notFound = (rel: string) => new FileTreeError("FILE_NOT_FOUND", `file not found: ${rel || "."}`);

function inside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith("/") ? root : root + "/");
}

export function hostFileTree(host: HostFileSystem): FileTree {
  // A message names the last segment of what the host refused, never the host's absolute path.
  const fs = guarded(host, (path) => path.slice(path.lastIndexOf("/") + 1));

  async function realRoot(root: string): Promise<string> {
    checkAbsolutePath(root);
    const real = await fs.realPath(root);
    if (real === undefined || (await fs.lstatKind(real)) !== "directory") throw new FileTreeError("FILE_NOT_FOUND", `no such directory: ${root}`);
    return real;
  }

  /** Resolves one entry under `dir` (already confined); a symlink must stay inside `rootReal`. */
  async function entry(rootReal: string, dir: string, name: string, rel: string): Promise<Located> {
    const link = `${dir === "/" ? "" : dir}/${name}`;
    const kind = await fs.lstatKind(link);
    if (kind !== "symlink") return { path: link, link, kind };
    const real = await fs.realPath(link);
    if (real === undefined || !inside(rootReal, real)) throw escapes(rel);
    const target = await fs.lstatKind(real);
    return { path: real, link, kind: target };
  }

  /**
   * Walks `rel` from the root. Missing parents are FILE_NOT_FOUND, or created with `create`.
   * Returns the final entry (which may not exist).
   */
  async function locate(root: string, rel: string, create = false): Promise<Located & { rootReal: string }> {
    const rootReal = await realRoot(root);
    if (rel === "") return { path: rootReal, link: rootReal, kind: "directory", rootReal };
    const clean = resolveRelativePath(rel);
    const segments = clean.split("/");
    let dir = rootReal;
    for (let i = 0; i < segments.length - 1; i++) {
      const at = await entry(rootReal, dir, segments[i]!, clean);
      if (at.kind === undefined && create) {
        await fs.makeDirectory(at.path);
      } else if (at.kind === undefined) {
        throw notFound(clean);
      } else if (at.kind !== "directory") {
        throw new FileTreeError(create ? "INVALID_PATH" : "FILE_NOT_FOUND", `${segments.slice(0, i + 1).join("/")} is not a directory`);
      }
      dir = at.path;
    }
    return { ...(await entry(rootReal, dir, segments[segments.length - 1]!, clean)), rootReal };
  }

  async function fileAt(root: string, rel: string): Promise<string> {
    const at = await locate(root, rel);
    if (at.kind === undefined) throw notFound(rel);
    if (at.kind !== "file") throw new FileTreeError("NOT_A_FILE", `not a file: ${rel || "."}`);
    return at.path;
  }

  return {
    async kind(root, rel) {
      try {
        const at = await locate(root, rel);
        return at.kind === "file" || at.kind === "directory" ? at.kind : undefined;
      } catch (err) {
        if (err instanceof FileTreeError && err.code === "FILE_NOT_FOUND") return undefined;
        throw err;
      }
    },
    async readText(root, rel) {
      return fs.readText(await fileAt(root, rel));
    },
    async readBytes(root, rel) {
      return fs.readBytes(await fileAt(root, rel));
    },
    async writeText(root, rel, text) {
      const at = await locate(root, rel, true);
      if (at.kind !== undefined && at.kind !== "file") throw new FileTreeError("NOT_A_FILE", `not a file: ${rel}`);
      await fs.writeText(at.path, text);
    },
    async list(root, rel) {
      const at = await locate(root, rel);
      if (at.kind === undefined) throw notFound(rel);
      if (at.kind !== "directory") throw new FileTreeError("INVALID_PATH", `not a directory: ${rel}`);
      const out: { name: string; kind: FileKind }[] = [];
      for (const e of await fs.readDir(at.path)) {
        let kind: HostEntryKind | undefined = e.kind;
        if (kind === "symlink") {
          // Listed only when it resolves inside the root, as what it points to.
          const real = await fs.realPath(`${at.path}/${e.name}`);
          kind = real !== undefined && inside(at.rootReal, real) ? await fs.lstatKind(real) : undefined;
        }
        if (kind === "file" || kind === "directory") out.push({ name: e.name, kind });
      }
      return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async makeDirectory(root, rel) {
      const at = await locate(root, rel, true);
      if (at.kind === undefined) await fs.makeDirectory(at.path);
      else if (at.kind !== "directory") throw new FileTreeError("INVALID_PATH", `a file is in the way: ${rel}`);
    },
    async remove(root, rel, options) {
      if (rel === "") throw new FileTreeError("INVALID_PATH", "the root cannot be removed");
      const at = await locate(root, rel);
      if (at.kind === undefined) throw notFound(rel);
      // A symlink is removed as a link: its target (inside the root) stays.
      if (at.link !== at.path || at.kind !== "directory") return fs.removeFile(at.link);
      if (!options?.recursive) throw new FileTreeError("NOT_A_FILE", `${rel} is a directory (remove it with recursive)`);
      await fs.removeTree(at.path);
    },
  };
}
