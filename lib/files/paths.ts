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

/** The longest name (one path segment) file systems take: 255 bytes of UTF-8 (NAME_MAX). */
export const MAX_NAME_BYTES = 255;
/** The longest absolute path accepted as a root: 4095 bytes of UTF-8 (PATH_MAX less its NUL). */
export const MAX_PATH_BYTES = 4095;

const utf8Length = (text: string) => new TextEncoder().encode(text).length;

/**
 * Returns the normalized relative path (`a/b.js`) or throws INVALID_PATH for: an empty path, a
 * NUL byte, an absolute path (`/x`, `\x`, `C:x`), a `..` segment (also behind percent-encoding or
 * backslashes), a name longer than 255 bytes, or a path that names the root itself. The same on
 * every runtime, whatever the file system underneath (the host's, or R2's keys).
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
    if (segment.length > MAX_NAME_BYTES / 3 && utf8Length(segment) > MAX_NAME_BYTES) throw invalid(`a name is longer than ${MAX_NAME_BYTES} bytes`);
    segments.push(segment);
  }
  if (segments.length === 0) throw invalid("names no file");
  return segments.join("/");
}

/**
 * Checks an absolute path used as a root (a worktree): it starts with `/`, has no NUL byte, no
 * name longer than 255 bytes and is at most 4095 bytes long. Throws INVALID_PATH with the reason.
 */
export function checkAbsolutePath(path: string): void {
  const invalid = (why: string) => new FileTreeError("INVALID_PATH", `invalid path: ${why}`);
  if (typeof path !== "string" || !path.startsWith("/")) throw invalid("not an absolute path");
  if (path.includes("\0")) throw invalid("contains a NUL byte");
  if (path.length > MAX_PATH_BYTES / 3 && utf8Length(path) > MAX_PATH_BYTES) throw invalid(`longer than ${MAX_PATH_BYTES} bytes`);
  for (const segment of path.split("/")) {
    if (segment.length > MAX_NAME_BYTES / 3 && utf8Length(segment) > MAX_NAME_BYTES) throw invalid(`a name is longer than ${MAX_NAME_BYTES} bytes`);
  }
}
