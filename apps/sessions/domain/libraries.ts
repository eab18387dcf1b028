/**
 * Libraries: JavaScript files in a configured directory (a FileTree root: a host directory on Node
 * and Deno, a fixed R2 prefix on workerd), looked up by name. A name is a relative path in that
 * directory (`lodash.js`, `vendor/dayjs.js`); `name` without an extension also finds `name.js`.
 * Path-like names go through the same confinement as worktree files, so none escapes.
 */
import { type FileTree, FileTreeError } from "#lib/files";
import { SessionServiceError } from "./errors.ts";
import { checkRelativePath, fileError } from "./files.ts";

export interface LibraryDirectory {
  tree: FileTree;
  /** Absolute root of the directory in `tree`. */
  root: string;
}

/** The file a library name stands for, or undefined when the directory has none. */
async function locate(dir: LibraryDirectory, name: string): Promise<string | undefined> {
  const rel = checkRelativePath(name, { name });
  const candidates = /\.[A-Za-z0-9]+$/.test(rel) ? [rel] : [rel, `${rel}.js`];
  for (const candidate of candidates) {
    try {
      if ((await dir.tree.kind(dir.root, candidate)) === "file") return candidate;
    } catch (err) {
      if (err instanceof FileTreeError) throw fileError(err, { name });
      throw err;
    }
  }
  return undefined;
}

/** Refuses (422 LIBRARY_NOT_AVAILABLE) a name the directory does not have. */
export async function checkLibraryAvailable(dir: LibraryDirectory, name: string): Promise<void> {
  if ((await locate(dir, name)) === undefined) {
    throw new SessionServiceError("LIBRARY_NOT_AVAILABLE", `no library named ${JSON.stringify(name)} in the library directory`, { name });
  }
}

/** The library's source, for session startup; undefined when it is gone from the directory. */
export async function readLibrary(dir: LibraryDirectory, name: string): Promise<string | undefined> {
  const rel = await locate(dir, name);
  return rel === undefined ? undefined : dir.tree.readText(dir.root, rel);
}
