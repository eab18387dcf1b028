// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * Static files (the route host's `app.static` mounts, the session service's web UI): files of one
 * directory of a FileTree, the mount prefix removed. Every path goes through the FileTree, whose confinement
 * (lib/files: `..`, percent-encoding, backslashes, NUL, symlinks out) is the only way in, so
 * nothing outside the directory is ever served. Only GET and HEAD; a directory serves its
 * `index.html`.
 */
import { getMimeType, mimes } from "hono/utils/mime";
import { FileTreeError, type FileTree } from "#lib/files";

/** Hono's table, and Markdown (docs beside a script's pages) as text. */
const MIMES = { ...mimes, md: "text/markdown; charset=utf-8" };

export function contentTypeOf(name: string): string {
  return getMimeType(name, MIMES) ?? "application/octet-stream";
}

export interface StaticDirectory {
  tree: FileTree;
  /** The directory served, as a FileTree root (absolute). */
  root: string;
}

const notFound = () => new Response("not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });

/** Serves `rest` (the path below the mount prefix, still percent-encoded) from `dir`. */
export async function serveStatic(dir: StaticDirectory, request: Request, rest: string): Promise<Response> {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response("method not allowed", { status: 405, headers: { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" } });
  }
  let rel = rest.replace(/^\/+/, "");
  try {
    const kind = rel === "" ? "directory" : await dir.tree.kind(dir.root, rel);
    if (kind === undefined) return notFound();
    if (kind === "directory") {
      if (rest !== "" && !rest.endsWith("/")) {
        // As a web server does: the directory's own URL ends in "/", so relative links work.
        const url = new URL(request.url);
        // One leading slash: `//x/` would send the browser to the host named x.
        return new Response(null, { status: 301, headers: { location: `${url.pathname.replace(/^\/+/, "/")}/${url.search}` } });
      }
      rel = rel === "" ? "index.html" : `${rel.replace(/\/+$/, "")}/index.html`;
    }
    const bytes = (await dir.tree.readBytes(dir.root, rel)) as Uint8Array<ArrayBuffer>;
    const headers = { "content-type": contentTypeOf(rel), "content-length": String(bytes.byteLength), "x-content-type-options": "nosniff" };
    return new Response(request.method === "HEAD" ? null : bytes, { status: 200, headers });
  } catch (err) {
    // A path that tries to leave the directory is answered like a missing file.
    if (err instanceof FileTreeError) return notFound();
    throw err;
  }
}
