/**
 * File uploads (beyond the spec), served only when the app is given an uploadable file store:
 * on workerd, where worktrees and the library directory live in R2 and there is no other way to
 * put files there. On Node and Deno the routes do not exist (they would write to the host).
 *
 *   PUT /worktree-files?root=/abs/dir&path=rel/file.js   raw text body → 204
 *   PUT /library-files?path=rel/file.js                  raw text body → 204
 *
 * Paths go through the same confinement as every other file access (422 INVALID_PATH).
 */
import type { Hono } from "hono";
import { type FileTree, FileTreeError } from "#lib/files";
import type { ServiceContext } from "../domain/context.ts";
import { SessionServiceError } from "../domain/errors.ts";
import { checkRelativePath } from "../domain/files.ts";
import { describe, query } from "./api.ts";
import { LibraryFileQuery, WorktreeFileQuery } from "./schemas.ts";

const TAG = "files";
const WRITTEN = { status: 204, description: "Written" } as const;

async function write(tree: FileTree, root: string, path: string, text: string): Promise<void> {
  const rel = checkRelativePath(path, { path });
  try {
    await tree.writeText(root, rel, text);
  } catch (err) {
    // A directory (or a file on the way) where the file should go: the path is the problem.
    if (err instanceof FileTreeError) throw new SessionServiceError("INVALID_PATH", err.message, { path });
    throw err;
  }
}

export function registerFileUploads(routes: Hono, ctx: ServiceContext): void {
  routes.put(
    "/worktree-files",
    describe({
      tag: TAG,
      summary: "Write a worktree file (workerd only)",
      description: "Creates or replaces `path` under the worktree `root`; the body is the file's text.",
      textBody: true,
      response: WRITTEN,
      errors: ["INVALID_PATH"],
    }),
    query(WorktreeFileQuery),
    async (c) => {
      const { root, path } = c.req.valid("query");
      await write(ctx.worktrees, root, path, await c.req.text());
      return c.body(null, 204);
    },
  );
  routes.put(
    "/library-files",
    describe({
      tag: TAG,
      summary: "Write a file of the library directory (workerd only)",
      textBody: true,
      response: WRITTEN,
      errors: ["INVALID_PATH"],
    }),
    query(LibraryFileQuery),
    async (c) => {
      await write(ctx.libraries.tree, ctx.libraries.root, c.req.valid("query").path, await c.req.text());
      return c.body(null, 204);
    },
  );
}
