/**
 * A tree of files under absolute roots: the session service's worktrees and library directory,
 * and the route host's static mounts. One implementation per place files can live: the host file
 * system (Node, Deno; in `lib/adapters/`) and an R2 bucket (workerd, keys `<root>/<rel>`).
 *
 * Relative paths go through `resolveRelativePath` (./paths.ts) first; implementations also refuse
 * anything that resolves outside `root` (symlinks), which only they can see.
 */
import { CodedError } from "#lib/errors";

export type FileTreeErrorCode = "INVALID_PATH" | "FILE_NOT_FOUND" | "NOT_A_FILE";

export class FileTreeError extends CodedError<FileTreeErrorCode> {}

export type FileKind = "file" | "directory";

export interface FileTree {
  /** What is at `rel` under `root` ("" = the root itself), or undefined when nothing is. */
  kind(root: string, rel: string): Promise<FileKind | undefined>;
  /** FILE_NOT_FOUND when missing, NOT_A_FILE for a directory, INVALID_PATH when it escapes. */
  readText(root: string, rel: string): Promise<string>;
  /** The same as `readText`, as bytes (static files). */
  readBytes(root: string, rel: string): Promise<Uint8Array>;
  /** Creates parent directories as needed. */
  writeText(root: string, rel: string, text: string): Promise<void>;
  /** Entries directly under `rel` ("" = the root), sorted by name. FILE_NOT_FOUND when missing,
   * INVALID_PATH when `rel` is a file. */
  list(root: string, rel: string): Promise<{ name: string; kind: FileKind }[]>;
  /** Creates a directory and its parents; a no-op when it exists. */
  makeDirectory(root: string, rel: string): Promise<void>;
  /**
   * Removes a file (a symlink: the link itself); a directory and everything under it only with
   * `recursive` (otherwise NOT_A_FILE). FILE_NOT_FOUND when missing.
   */
  remove(root: string, rel: string, options?: { recursive?: boolean }): Promise<void>;
}
