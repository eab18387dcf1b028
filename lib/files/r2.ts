/**
 * FileTree over an R2 bucket (workerd's worktree store). A file `rel` under `root` is the object
 * `<root without leading slash>/<rel>`; a directory exists when some key starts with its prefix
 * (`makeDirectory` writes a `.keep` marker, hidden from listings). R2 has no symlinks, so
 * confinement is `resolveRelativePath` alone.
 */
import { checkAbsolutePath, resolveRelativePath } from "./paths.ts";
import { type FileKind, type FileTree, FileTreeError } from "./tree.ts";

/** The slice of workerd's `R2Bucket` binding this tree uses (structural, so no workers types). */
export interface R2BucketLike {
  head(key: string): Promise<unknown | null>;
  get(key: string): Promise<{ text(): Promise<string>; arrayBuffer(): Promise<ArrayBuffer> } | null>;
  put(key: string, value: string | Uint8Array): Promise<unknown>;
  delete(keys: string | string[]): Promise<void>;
  list(options: { prefix?: string; delimiter?: string; cursor?: string; limit?: number }): Promise<{
    objects: { key: string }[];
    delimitedPrefixes: string[];
    truncated: boolean;
    cursor?: string;
  }>;
}

const KEEP = ".keep";

/** R2's longest key, in bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;

/** `/work/tree` + `a/b.js` -> `work/tree/a/b.js`; `rel` "" -> the root's own key. Roots and paths
 * are checked as on a host file system (lib/files/paths.ts), and a key R2 would refuse is
 * INVALID_PATH too. */
function keyOf(root: string, rel: string): string {
  checkAbsolutePath(root);
  const base = root.replace(/^\/+/, "").replace(/\/+$/, "");
  const key = rel === "" ? base : base === "" ? resolveRelativePath(rel) : `${base}/${resolveRelativePath(rel)}`;
  if (key.length > MAX_KEY_BYTES / 3 && new TextEncoder().encode(key).length > MAX_KEY_BYTES) {
    throw new FileTreeError("INVALID_PATH", `invalid path ${JSON.stringify(rel)}: longer than ${MAX_KEY_BYTES} bytes with its root`);
  }
  return key;
}

const prefixOf = (key: string) => (key === "" ? "" : `${key}/`);

export function r2FileTree(bucket: R2BucketLike): FileTree {
  async function isDirectory(key: string): Promise<boolean> {
    const page = await bucket.list({ prefix: prefixOf(key), limit: 1 });
    return page.objects.length > 0 || page.delimitedPrefixes.length > 0;
  }

  async function kindAt(key: string, rel: string): Promise<FileKind | undefined> {
    if (rel !== "" && (await bucket.head(key)) !== null) return "file";
    return (await isDirectory(key)) ? "directory" : undefined;
  }

  /** Every key under a prefix, following cursors. */
  async function keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix, cursor });
      for (const o of page.objects) keys.push(o.key);
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return keys;
  }

  /** Refuses a write below something that is a file. */
  async function checkParents(root: string, rel: string): Promise<void> {
    const segments = resolveRelativePath(rel).split("/");
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join("/");
      if ((await bucket.head(keyOf(root, parent))) !== null) throw new FileTreeError("INVALID_PATH", `${parent} is not a directory`);
    }
  }

  async function objectAt(root: string, rel: string) {
    const key = keyOf(root, rel);
    const object = rel === "" ? null : await bucket.get(key);
    if (object) return object;
    if (await isDirectory(key)) throw new FileTreeError("NOT_A_FILE", `not a file: ${rel || "."}`);
    throw new FileTreeError("FILE_NOT_FOUND", `file not found: ${rel}`);
  }

  return {
    kind: async (root, rel) => kindAt(keyOf(root, rel), rel),
    async readText(root, rel) {
      return (await objectAt(root, rel)).text();
    },
    async readBytes(root, rel) {
      return new Uint8Array(await (await objectAt(root, rel)).arrayBuffer());
    },
    async writeText(root, rel, text) {
      const key = keyOf(root, rel);
      if (rel === "" || (await isDirectory(key))) throw new FileTreeError("NOT_A_FILE", `not a file: ${rel || "."}`);
      await checkParents(root, rel);
      await bucket.put(key, text);
    },
    async list(root, rel) {
      const key = keyOf(root, rel);
      const kind = await kindAt(key, rel);
      if (kind === undefined) throw new FileTreeError("FILE_NOT_FOUND", `file not found: ${rel || "."}`);
      if (kind === "file") throw new FileTreeError("INVALID_PATH", `not a directory: ${rel}`);
      const prefix = prefixOf(key);
      const entries = new Map<string, FileKind>();
      let cursor: string | undefined;
      do {
        const page = await bucket.list({ prefix, delimiter: "/", cursor });
        for (const o of page.objects) {
          const name = o.key.slice(prefix.length);
          if (name !== KEEP && name !== "") entries.set(name, "file");
        }
        for (const p of page.delimitedPrefixes) entries.set(p.slice(prefix.length, -1), "directory");
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      return [...entries].map(([name, kind]) => ({ name, kind })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async makeDirectory(root, rel) {
      const key = keyOf(root, rel);
      const kind = await kindAt(key, rel);
      if (kind === "file") throw new FileTreeError("INVALID_PATH", `a file is in the way: ${rel}`);
      if (kind === "directory") return;
      await checkParents(root, rel);
      await bucket.put(`${prefixOf(key)}${KEEP}`, "");
    },
    async remove(root, rel, options) {
      if (rel === "") throw new FileTreeError("INVALID_PATH", "the root cannot be removed");
      const key = keyOf(root, rel);
      const kind = await kindAt(key, rel);
      if (kind === undefined) throw new FileTreeError("FILE_NOT_FOUND", `file not found: ${rel}`);
      if (kind === "file") return bucket.delete(key);
      if (!options?.recursive) throw new FileTreeError("NOT_A_FILE", `${rel} is a directory (remove it with recursive)`);
      const keys = await keysUnder(prefixOf(key));
      for (let i = 0; i < keys.length; i += 1000) await bucket.delete(keys.slice(i, i + 1000));
    },
  };
}

/**
 * An in-memory bucket with the same listing rules as R2 (sorted keys, prefix, delimiter, cursor):
 * a worktree store for tests, and the backing of `memoryFileTree`.
 */
export function memoryBucket(files: Record<string, string | Uint8Array> = {}): R2BucketLike & { keys(): string[] } {
  const data = new Map<string, string | Uint8Array>(Object.entries(files));
  const PAGE = 1000;
  return {
    keys: () => [...data.keys()].sort(),
    async head(key) {
      return data.has(key) ? { key } : null;
    },
    async get(key) {
      const value = data.get(key);
      if (value === undefined) return null;
      const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value;
      return { text: async () => new TextDecoder().decode(bytes), arrayBuffer: async () => bytes.slice().buffer };
    },
    async put(key, value) {
      data.set(key, value);
      return { key };
    },
    async delete(keys) {
      for (const k of typeof keys === "string" ? [keys] : keys) data.delete(k);
    },
    async list({ prefix = "", delimiter, cursor, limit = PAGE }) {
      const sorted = [...data.keys()].filter((k) => k.startsWith(prefix)).sort();
      const objects: { key: string }[] = [];
      const prefixes = new Set<string>();
      let i = cursor ? Number(cursor) : 0;
      for (; i < sorted.length && objects.length + prefixes.size < limit; i++) {
        const key = sorted[i]!;
        const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
        if (cut >= 0) prefixes.add(key.slice(0, cut + 1));
        else objects.push({ key });
      }
      const truncated = i < sorted.length;
      return { objects, delimitedPrefixes: [...prefixes], truncated, cursor: truncated ? String(i) : undefined };
    },
  };
}

/** A FileTree held in memory (`files`: `<root without leading slash>/<rel>` -> text), for tests. */
export function memoryFileTree(files: Record<string, string | Uint8Array> = {}): FileTree {
  return r2FileTree(memoryBucket(files));
}
