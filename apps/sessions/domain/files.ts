/**
 * Files named by a request (run-file paths, startup files) are checked in two steps before any
 * script runs: the string by `resolveRelativePath` (absolute, `..`, percent-encoded dots), then
 * the FileTree, which alone sees symlinks that leave the root. FileTree failures become the
 * service's codes: INVALID_PATH (422) and FILE_NOT_FOUND (404; a directory counts as missing).
 */
import { type FileTree, FileTreeError, resolveRelativePath } from "#lib/files";
import { SessionServiceError } from "./errors.ts";

export function fileError(err: FileTreeError, details?: Record<string, unknown>): SessionServiceError {
  const code = err.code === "INVALID_PATH" ? "INVALID_PATH" : "FILE_NOT_FOUND";
  return new SessionServiceError(code, err.message, details);
}

/** The normalized relative path, or INVALID_PATH. */
export function checkRelativePath(path: string, details?: Record<string, unknown>): string {
  try {
    return resolveRelativePath(path);
  } catch (err) {
    if (err instanceof FileTreeError) throw fileError(err, details);
    throw err;
  }
}

/** Reads `rel` under `root`, with the service's codes for a path that escapes or names no file. */
export async function readFileIn(tree: FileTree, root: string, rel: string, details?: Record<string, unknown>): Promise<string> {
  try {
    return await tree.readText(root, checkRelativePath(rel, details));
  } catch (err) {
    if (err instanceof FileTreeError) throw fileError(err, details);
    throw err;
  }
}
