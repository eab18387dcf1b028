// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * Static files (the route host's `app.static` mounts, the session service's web UI): files of one
 * directory of a FileTree, the mount prefix removed. Every path goes through the FileTree, whose confinement
 * (lib/files: `..`, percent-encoding, backslashes, NUL, symlinks out) is the only way in, so
 * nothing outside the directory is ever served. Only GET and HEAD; a directory serves its
 * `index.html`; dot-entries (`.env`, `.git/`) are never served.
 */
import { getMimeType, mimes } from "hono/utils/mime";
import { FileTreeError, resolveRelativePath, type FileTree } from "#lib/files";

/** Hono's table, and Markdown (docs beside a script's pages) as text. */
const MIMES = { ...mimes, md: "text/markdown; charset=utf-8" };

export function contentTypeOf(name: string): string {
  return getMimeType(name, MIMES) ?? "application/octet-stream";
}

export interface StaticDirectory {
  tree: FileTree;
  /** The directory served, as a FileTree root (absolute); with `base`, the one that confines it. */
  root: string;
  /**
   * The directory served, below `root` (an assets module's `dist`). Walked inside `root` on each
   * request, so a symlink on its way cannot lead out of `root` (the FileTree trusts a root's own
   * symlinks: `root/base` as a root would).
   */
  base?: string;
}

/** `dir` as a FileTree root of its own: undefined when its base is not a directory inside `root`
 * (a symlink out throws INVALID_PATH). */
async function servedDirectory(dir: StaticDirectory): Promise<StaticDirectory | undefined> {
  if (!dir.base) return dir;
  if ((await dir.tree.kind(dir.root, dir.base)) !== "directory") return undefined;
  return { tree: dir.tree, root: `${dir.root.replace(/\/+$/, "")}/${dir.base}` };
}

/** Whether `rel` names a dot-entry or something below one: never served, as `routes bundle`
 * never bundles them (the same answer on every runtime). Throws INVALID_PATH for an escaping path. */
const hidden = (rel: string) => rel !== "" && resolveRelativePath(rel).split("/").some((name) => name.startsWith("."));

const notFound = () => new Response("not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });

/**
 * Serves `rest` (the path below the mount prefix, still percent-encoded) from `dir`. With
 * `fallback` (a single-page app's index, a path relative to `dir`), a path that names no file is
 * answered with that file instead of 404; a path that tries to leave the directory is still 404.
 */
export async function serveStatic(within: StaticDirectory, request: Request, rest: string, fallback?: string): Promise<Response> {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response("method not allowed", { status: 405, headers: { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" } });
  }
  let rel = rest.replace(/^\/+/, "");
  try {
    const dir = await servedDirectory(within);
    if (dir === undefined) return notFound();
    const kind = rel === "" ? "directory" : hidden(rel) ? undefined : await dir.tree.kind(dir.root, rel);
    if (kind === undefined) return fallback === undefined ? notFound() : await fileResponse(dir, request, fallback, true);
    if (kind === "directory") {
      if (rest !== "" && !rest.endsWith("/")) {
        // As a web server does: the directory's own URL ends in "/", so relative links work.
        const url = new URL(request.url);
        // One leading slash: `//x/` would send the browser to the host named x.
        return new Response(null, { status: 301, headers: { location: `${url.pathname.replace(/^\/+/, "/")}/${url.search}` } });
      }
      rel = rel === "" ? "index.html" : `${rel.replace(/\/+$/, "")}/index.html`;
      // A directory without its index.html, in a single-page app: the app's index.
      if (fallback !== undefined && (await dir.tree.kind(dir.root, rel)) !== "file") return await fileResponse(dir, request, fallback, true);
    }
    return await fileResponse(dir, request, rel, false);
  } catch (err) {
    // A path that tries to leave the directory is answered like a missing file.
    if (err instanceof FileTreeError) return notFound();
    throw err;
  }
}

/** A file of `dir` as the answer; a single-page app's index is revalidated on every visit (`no-cache`), since its name never changes. */
async function fileResponse(dir: StaticDirectory, request: Request, rel: string, index: boolean): Promise<Response> {
  // Also a single-page app's index that names one.
  if (hidden(rel)) throw new FileTreeError("FILE_NOT_FOUND", `not served: ${rel}`);
  const bytes = (await dir.tree.readBytes(dir.root, rel)) as Uint8Array<ArrayBuffer>;
  const headers: Record<string, string> = { "content-type": contentTypeOf(rel), "content-length": String(bytes.byteLength), "x-content-type-options": "nosniff" };
  if (index) headers["cache-control"] = "no-cache";
  return new Response(request.method === "HEAD" ? null : bytes, { status: 200, headers });
}
