/**
 * Roots: the host directories an absolute path a client names (a session's worktree) may be
 * inside. Judged on real paths, after symlinks, so a link inside a root that points elsewhere,
 * a `..` segment, or a root that is itself a link cannot stretch the boundary. Runtime-free: the
 * host's real-path lookup comes in as `HostPaths` (lib/adapters/node/files.ts, deno-files.ts).
 */
import { CodedError } from "#lib/errors";
import { checkAbsolutePath } from "./paths.ts";

/** What a host tells about its paths. */
export interface HostPaths {
  /** The canonical path (symlinks resolved), or undefined when it does not exist. */
  realPath(path: string): Promise<string | undefined>;
  /** The system's temporary directory (Node: `os.tmpdir()`; Deno: `$TMPDIR` or `/tmp`). */
  tempDirectory(): string;
}

/** A root that would confine nothing, or is not a directory: a configuration error. */
export class RootsError extends CodedError<"INVALID_ROOT"> {}

export interface Roots {
  /** The roots' real paths. */
  readonly roots: readonly string[];
  /** Whether `path` (absolute) is one of the roots or below one, once its symlinks are resolved. */
  contains(path: string): Promise<boolean>;
  /**
   * The real path of `path` (which must exist) when it lies inside a root, else undefined. What a
   * client named is kept as this: a symlink or `..` in the name, swapped later (by another
   * session's `fs`, say), cannot then move it out of the roots.
   */
  realPathInside(path: string): Promise<string | undefined>;
}

/** `path` is `root` or below it (both real, normalized paths). */
export function pathInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** The real path of `path`'s deepest existing ancestor, with the rest of `path` applied to it
 * by name (`..` as one step up): where `path` is, or would be once created. */
export async function realLocation(realPath: HostPaths["realPath"], path: string): Promise<string> {
  checkAbsolutePath(path);
  const segments = path.split("/").filter((s) => s !== "" && s !== ".");
  for (let i = segments.length; i >= 0; i--) {
    // A lookup that fails (permission denied on the way) counts as missing: its parent decides.
    const real = await realPath(`/${segments.slice(0, i).join("/")}`).catch(() => undefined);
    if (real === undefined) continue;
    const out = real.split("/").filter((s) => s !== "");
    for (const s of segments.slice(i)) {
      if (s === "..") out.pop();
      else out.push(s);
    }
    return `/${out.join("/")}`;
  }
  return "/";
}

/** Why a directory (by its real path) would confine nothing that matters, or undefined. */
function tooBroad(real: string, realHome: string | undefined): string | undefined {
  if (real === "/") return "is the whole file system";
  if (real === realHome) return "is the home directory as a whole (keys, shell profiles, every project)";
  return undefined;
}

const realOrUndefined = (realPath: HostPaths["realPath"], dir: string | undefined) =>
  dir === undefined ? Promise.resolve(undefined) : realPath(dir).catch(() => undefined);

/** Throws INVALID_ROOT when `dir` exists and is `/` or the home directory. */
export async function refuseTooBroad(realPath: HostPaths["realPath"], dir: string, home: string | undefined, what: string): Promise<void> {
  const [real, realHome] = await Promise.all([realOrUndefined(realPath, dir), realOrUndefined(realPath, home)]);
  const why = real === undefined ? undefined : tooBroad(real, realHome);
  if (why) throw new RootsError("INVALID_ROOT", `${what} ${dir} ${why}: name a directory below it`);
}

/**
 * Roots from these absolute directories. Each must exist; none may be `/` or `home` as a whole
 * (they would confine nothing that matters).
 */
export async function hostRoots(realPath: HostPaths["realPath"], dirs: readonly string[], home?: string): Promise<Roots> {
  if (dirs.length === 0) throw new RootsError("INVALID_ROOT", "no root given: name at least one directory");
  const realHome = await realOrUndefined(realPath, home);
  const roots: string[] = [];
  for (const dir of dirs) {
    if (!dir.startsWith("/")) throw new RootsError("INVALID_ROOT", `${dir} is not an absolute path`);
    const real = await realOrUndefined(realPath, dir);
    if (real === undefined) throw new RootsError("INVALID_ROOT", `${dir} does not exist`);
    const why = tooBroad(real, realHome);
    if (why) throw new RootsError("INVALID_ROOT", `${dir} ${why}: name the directories below it that clients may use`);
    if (!roots.includes(real)) roots.push(real);
  }
  return {
    roots,
    async contains(path) {
      const real = await realLocation(realPath, path);
      return roots.some((root) => pathInside(root, real));
    },
    async realPathInside(path) {
      const real = await realPath(path).catch(() => undefined);
      return real !== undefined && roots.some((root) => pathInside(root, real)) ? real : undefined;
    },
  };
}

/**
 * The default roots: the directory the daemon started in and the system's temporary directory,
 * leaving out either when it is `/` or the home directory (`npm start` run from `~` must not
 * open all of it).
 */
export async function defaultRootDirs(realPath: HostPaths["realPath"], cwd: string, temp: string, home?: string): Promise<string[]> {
  const realHome = await realOrUndefined(realPath, home);
  const out: string[] = [];
  for (const dir of [cwd, temp]) {
    const real = await realOrUndefined(realPath, dir);
    if (real !== undefined && tooBroad(real, realHome) === undefined) out.push(dir);
  }
  return out;
}
