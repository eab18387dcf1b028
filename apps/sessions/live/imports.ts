/**
 * Worktree imports: `require("./x")` and `import "./x"` of worktree files, resolved by the
 * template's resolver settings. The sandbox runs synchronously, so before an evaluation the
 * import graph is read ahead: the code's literal specifiers are scanned, their candidate files
 * read from the FileTree (asynchronously, bounded), the files found scanned in turn. The sandbox
 * then resolves against what was read, synchronously.
 *
 * Resolution of a specifier (from the importing file, or the worktree root for a REPL input):
 *   `./x`, `../x`  relative to the importing file's directory (never above the worktree root)
 *   `/x`           the worktree root, only with `allow_absolute_repo_imports`
 *   `x`            under each of `roots` in order (worktree-relative directories)
 * Each base tries the file itself, then `base + ext` and `base/index + ext` for each extension.
 * Canonical names are worktree paths with a leading "/" (`/src/util.js`).
 * Limits: specifiers must be string literals; a graph beyond MAX_FILES files or MAX_BYTES of
 * source is cut off (the imports past it are "not found").
 */
import { type FileTree, resolveRelativePath } from "#lib/files";
import type { SourceResolver } from "#lib/sandbox";
import { dirname, join, normalize } from "./modules/path.ts";
import type { Settings } from "./types.ts";

const MAX_FILES = 256;
const MAX_BYTES = 8 * 1024 * 1024;
/** Reads tried per prefetch (each candidate of each specifier is one). */
const MAX_PROBES = 2048;

const SPECIFIERS = [
  /\brequire\s*\(\s*(["'`])([^"'`\n]+)\1\s*\)/g,
  /\bimport\s*\(\s*(["'`])([^"'`\n]+)\1/g,
  /\b(?:import|export)\b[^;'"`()]*?\bfrom\s*(["'])([^"'\n]+)\1/g,
  /\bimport\s*(["'])([^"'\n]+)\1/g,
];

/** Literal specifiers named by `require`, `import` and `export ... from` in a source text. */
function scanSpecifiers(source: string): string[] {
  if (!source.includes("require") && !source.includes("import") && !source.includes("export")) return [];
  const found = new Set<string>();
  for (const re of SPECIFIERS) for (const m of source.matchAll(re)) found.add(m[2]!);
  return [...found];
}

export interface ImportResolver {
  roots: string[];
  extensions: string[];
  allowAbsolute: boolean;
}

export function importResolver(settings: Settings["resolver"]): ImportResolver {
  const roots: string[] = [];
  for (const root of settings.roots) {
    if (root === "." || root === "./" || root === "" || root === "/") roots.push("");
    else {
      try {
        roots.push(resolveRelativePath(root.replace(/^\/+/, "")));
      } catch {
        // A root outside the worktree names nothing.
      }
    }
  }
  return { roots, extensions: settings.extensions.filter((e) => typeof e === "string" && e !== ""), allowAbsolute: settings.allow_absolute_repo_imports };
}

/**
 * Worktree-relative paths to try for `specifier` from `importer` (a canonical name or undefined),
 * in order. Throws for an absolute specifier when those are not allowed.
 */
function candidates(r: ImportResolver, specifier: string, importer: string | undefined): string[] {
  let bases: string[];
  if (specifier === "." || specifier === ".." || specifier.startsWith("./") || specifier.startsWith("../")) {
    const from = importer ? dirname(importer) : "/";
    const joined = normalize(join(from, specifier));
    bases = joined.startsWith("/") ? [joined.slice(1)] : []; // ".." above the root names nothing
  } else if (specifier.startsWith("/")) {
    if (!r.allowAbsolute) {
      throw new Error(`Cannot find module '${specifier}': absolute imports are not allowed (resolver.allow_absolute_repo_imports is false)`);
    }
    bases = [normalize(specifier).slice(1)];
  } else {
    bases = r.roots.map((root) => (root === "" ? specifier : `${root}/${specifier}`));
  }
  const out: string[] = [];
  for (const base of bases) {
    const tries = [base, ...r.extensions.map((e) => base + e), ...r.extensions.map((e) => `${base}/index${e}`)];
    for (const t of tries) {
      try {
        out.push(resolveRelativePath(t));
      } catch {
        // not a path inside the worktree
      }
    }
  }
  return out;
}

/**
 * Reads the import graph of `entry` ahead and returns the resolver the sandbox uses. `natives`
 * are module names that are not files (bare `fs` is the native module).
 */
export async function prefetchImports(
  tree: FileTree,
  worktree: string,
  resolver: ImportResolver,
  entry: { name?: string; source: string },
  natives: ReadonlySet<string>,
): Promise<SourceResolver | undefined> {
  if (scanSpecifiers(entry.source).length === 0) return undefined;
  /** path -> text, or null when there is no file. */
  const files = new Map<string, string | null>();
  let probes = 0;
  let bytes = 0;
  let loaded = 0;

  const reads = new Map<string, Promise<string | null>>();
  function probe(path: string): Promise<string | null> {
    let read = reads.get(path);
    if (!read) {
      read = readBounded(path);
      reads.set(path, read);
    }
    return read;
  }
  async function readBounded(path: string): Promise<string | null> {
    if (probes++ >= MAX_PROBES || loaded >= MAX_FILES || bytes >= MAX_BYTES) return null;
    let text: string | null;
    try {
      text = await tree.readText(worktree, path);
    } catch {
      text = null; // missing, a directory, outside the worktree, or unreadable: not a candidate
    }
    if (text !== null && (loaded >= MAX_FILES || bytes + text.length > MAX_BYTES)) text = null;
    if (text !== null) {
      loaded++;
      bytes += text.length;
    }
    files.set(path, text);
    return text;
  }

  /** The first candidate that is a file, probing in order. */
  async function find(specifier: string, importer: string | undefined): Promise<string | undefined> {
    let list: string[];
    try {
      list = candidates(resolver, specifier, importer);
    } catch {
      return undefined; // the resolver reports it when the code runs
    }
    for (const path of list) if ((await probe(path)) !== null) return path;
    return undefined;
  }

  const scanned = new Set<string>();
  let frontier: { name: string | undefined; source: string }[] = [{ name: entry.name, source: entry.source }];
  while (frontier.length > 0) {
    const next: { name: string; source: string }[] = [];
    await Promise.all(
      frontier.flatMap(({ name, source }) =>
        scanSpecifiers(source)
          .filter((s) => !natives.has(s))
          .map(async (specifier) => {
            const path = await find(specifier, name);
            if (path === undefined || scanned.has(path)) return;
            scanned.add(path);
            next.push({ name: "/" + path, source: files.get(path)! });
          })
      ),
    );
    frontier = next;
  }

  return {
    resolve(specifier, importer) {
      for (const path of candidates(resolver, specifier, importer)) if (typeof files.get(path) === "string") return "/" + path;
      return undefined;
    },
    source: (name) => files.get(name.slice(1)) ?? "",
  };
}
