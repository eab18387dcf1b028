/**
 * The `fs` module: promise-based file functions (the shape of Node's `fs/promises`) over the
 * session's worktree FileTree. Paths are worktree-relative ("." is the root); every path goes
 * through `resolveRelativePath` and the FileTree's own confinement (symlinks), so nothing outside
 * the worktree is reachable. Reads are allowed anywhere in the worktree; writes (writeFile,
 * appendFile, mkdir, rm, unlink) only under a directory an enabled `fs` capability names.
 * Errors carry Node's codes: ENOENT, EISDIR, ENOTDIR, EEXIST, EACCES (path outside the
 * worktree), EPERM (no capability for a write), EFBIG (file larger than the session's memory).
 */
import { CodedError } from "#lib/errors";
import { type FileTree, FileTreeError, resolveRelativePath } from "#lib/files";
import type { HostValue, NativeModule } from "#lib/sandbox";

interface FsModuleOptions {
  tree: FileTree;
  root: string;
  /** Worktree-relative directories where writes are allowed ("" = everywhere). */
  writable: string[];
  /** Largest file `readFile` returns, in UTF-16 code units. */
  maxReadChars: number;
}

/** Directories where writes are allowed, from the names of enabled `fs` capabilities. */
export function writableDirectories(names: string[]): string[] {
  return names.map((name) => (name === "." || name === "./" || name === "" ? "" : resolveRelativePath(name)));
}

/** The Node `fs` error codes a script sees (`err.code`). */
export type FsErrorCode = "ENOENT" | "EISDIR" | "ENOTDIR" | "EEXIST" | "EACCES" | "EPERM" | "EFBIG" | "EIO";

class FsError extends CodedError<FsErrorCode> {
  constructor(code: FsErrorCode, message: string) {
    super(code, `${code}: ${message}`);
  }
}

const CODES: Record<FileTreeError["code"], FsErrorCode> = { FILE_NOT_FOUND: "ENOENT", NOT_A_FILE: "EISDIR", INVALID_PATH: "EACCES" };

/** A FileTree failure as the error a Node script expects. */
function translate(err: unknown, op: string, path: string): never {
  if (err instanceof FsError || err instanceof TypeError) throw err;
  if (err instanceof FileTreeError) {
    const code = /not a directory|in the way/.test(err.message) ? "ENOTDIR" : CODES[err.code];
    throw new FsError(code, `${op} '${path}': ${err.message}`);
  }
  throw new FsError("EIO", `${op} '${path}': ${err instanceof Error ? err.message : String(err)}`);
}

function pathArg(v: HostValue): string {
  if (typeof v !== "string") throw new TypeError('The "path" argument must be of type string');
  return v;
}

function textArg(v: HostValue): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  throw new TypeError('The "data" argument must be of type string or an instance of Uint8Array');
}

function flag(options: HostValue, name: string): boolean {
  return options !== null && typeof options === "object" && !Array.isArray(options) && !(options instanceof Uint8Array) &&
    (options as Record<string, HostValue>)[name] === true;
}

export function fsModule(o: FsModuleOptions): NativeModule {
  const { tree, root } = o;
  /** "." and "" name the root; anything else must be a clean relative path. */
  const rel = (path: string): string => (path === "." || path === "./" || path === "" ? "" : resolveRelativePath(path));
  const writable = (op: string, path: string): string => {
    const r = rel(path);
    if (r === "" || !o.writable.some((dir) => dir === "" || r === dir || r.startsWith(dir + "/"))) {
      throw new FsError(
        "EPERM",
        `${op} '${path}': writes are not allowed here (no fs capability covers it): give the template an fs capability naming the directory ` +
          `(POST /api/v1/templates/<template id>/capabilities {"kind": "fs", "name": "${
            r.split("/")[0] || "."
          }"}; "." for the whole worktree), then start a new session`,
      );
    }
    return r;
  };
  /** A module function: async (so every failure is a rejection), errors translated. */
  const op = (name: string, fn: (path: string, a: HostValue) => Promise<HostValue | void>) => async (p: HostValue, a: HostValue): Promise<HostValue | void> => {
    const path = p === undefined && name === "scandir" ? "." : pathArg(p);
    try {
      return await fn(path, a);
    } catch (err) {
      return translate(err, name, path);
    }
  };
  const parentMissing = async (r: string) => {
    const i = r.lastIndexOf("/");
    return i > 0 && (await tree.kind(root, r.slice(0, i))) !== "directory";
  };

  return {
    functions: {
      readFile: op("open", async (path) => {
        const text = await tree.readText(root, rel(path));
        if (text.length > o.maxReadChars) throw new FsError("EFBIG", `open '${path}': file is larger than the session's memory limit`);
        return text;
      }),
      writeFile: op("open", async (path, data) => {
        const text = textArg(data);
        await tree.writeText(root, writable("open", path), text);
      }),
      appendFile: op("open", async (path, data) => {
        const text = textArg(data);
        const r = writable("open", path);
        const before = (await tree.kind(root, r)) === "file" ? await tree.readText(root, r) : "";
        await tree.writeText(root, r, before + text);
      }),
      readdir: op("scandir", async (path) => (await tree.list(root, rel(path))).map((e) => e.name)),
      stat: op("stat", async (path) => {
        const kind = await tree.kind(root, rel(path));
        if (!kind) throw new FsError("ENOENT", `stat '${path}': no such file or directory`);
        return { kind, isFile: kind === "file", isDirectory: kind === "directory" };
      }),
      exists: op("access", async (path) => {
        try {
          return (await tree.kind(root, rel(path))) !== undefined;
        } catch {
          return false;
        }
      }),
      mkdir: op("mkdir", async (path, options) => {
        const r = writable("mkdir", path);
        if (!flag(options, "recursive")) {
          if ((await tree.kind(root, r)) !== undefined) throw new FsError("EEXIST", `mkdir '${path}': file already exists`);
          if (await parentMissing(r)) throw new FsError("ENOENT", `mkdir '${path}': no such file or directory`);
        }
        await tree.makeDirectory(root, r);
      }),
      rm: op("rm", async (path, options) => {
        const r = writable("rm", path);
        if (flag(options, "force") && (await tree.kind(root, r)) === undefined) return;
        await tree.remove(root, r, { recursive: flag(options, "recursive") });
      }),
      unlink: op("unlink", async (path) => {
        const r = writable("unlink", path);
        if ((await tree.kind(root, r)) === "directory") throw new FsError("EISDIR", `unlink '${path}': is a directory`);
        await tree.remove(root, r);
      }),
    },
  };
}
