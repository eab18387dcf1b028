/**
 * The one check every relative path goes through before a file is touched (run-file paths,
 * startup files, the sandbox's `fs` module, static mounts). Symlinks are the FileTree's business
 * (only it can see them); everything that can be decided from the string is decided here.
 */
import { FileTreeError } from "./tree.ts";

/** Decodes percent-escapes until nothing changes, so `%252e%252e` cannot hide a `..`. */
function decodeFully(path: string): string {
  let current = path;
  for (let i = 0; i < 8; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current; // a lone `%` is an ordinary character
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

/**
 * Returns the normalized relative path (`a/b.js`) or throws INVALID_PATH for: an empty path, a
 * NUL byte, an absolute path (`/x`, `\x`, `C:x`), a `..` segment (also behind percent-encoding or
 * backslashes), or a path that names the root itself.
 */
export function resolveRelativePath(path: string): string {
  const invalid = (why: string) => new FileTreeError("INVALID_PATH", `invalid path ${JSON.stringify(path)}: ${why}`);
  if (typeof path !== "string" || path.length === 0) throw invalid("empty");
  const decoded = decodeFully(path);
  if (decoded.includes("\0")) throw invalid("contains a NUL byte");
  const unified = decoded.replaceAll("\\", "/");
  if (unified.startsWith("/") || /^[A-Za-z]:/.test(unified)) throw invalid("absolute paths are not allowed");
  const segments: string[] = [];
  for (const segment of unified.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") throw invalid("'..' leaves the worktree");
    segments.push(segment);
  }
  if (segments.length === 0) throw invalid("names no file");
  return segments.join("/");
}
