// A TypeScript entry as one plain ES module, built by esbuild and cached, so Node runs it without
// a TypeScript loader. Plain JavaScript because it runs before any loader exists (node/run.mjs).
//
// Why: tsx costs ~190 ms of start and a module-hooks thread (~27 MiB) per process or worker
// thread; a bundle costs neither. Package imports stay imports (`packages: "external"`), resolved
// from the project's node_modules because the cache lives inside it.
//
// The cache is checked by the modification time and size of every source the bundle was built
// from (esbuild's metafile), ~1 ms for the IdP's 50 files, so an unchanged tree starts without
// esbuild; any edit rebuilds (~80 ms). Bundles are named by content hash and written aside, then
// renamed, so processes sharing the cache never read a partial or replaced file.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const CACHE = resolve(ROOT, "node_modules/.cache/entries");
/** Older bundles of an entry (its sources changed since) are removed after this long. */
const STALE_MS = 10 * 60_000;
/** Chunks no entry's cache names are removed after this long: a long-running process may still
 * import one it has not needed yet (a chunk loads on first use). */
const STALE_CHUNK_MS = 24 * 60 * 60_000;

/** What identifies a source's content cheaply; "unstable" never matches (see `build`). */
const stamp = (path, builtAt = Infinity) => {
  const s = statSync(path, { throwIfNoEntry: false });
  if (!s) return "missing";
  return s.mtimeMs >= builtAt ? "unstable" : `${s.mtimeMs}:${s.size}`;
};

/**
 * The cached result for an entry if every source it was built from is unchanged: `{ bundle }`,
 * with `bundle` null if it was found unbundleable; undefined if it must be built.
 */
function cached(name) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(resolve(CACHE, `${name}.json`), "utf8"));
  } catch {
    return undefined;
  }
  for (const [path, seen] of Object.entries(manifest.inputs)) if (stamp(resolve(ROOT, path)) !== seen) return undefined;
  if (manifest.bundle === null) return { bundle: null };
  const bundle = resolve(CACHE, manifest.bundle);
  for (const file of [bundle, ...(manifest.chunks ?? []).map((c) => resolve(CACHE, c))]) {
    if (!statSync(file, { throwIfNoEntry: false })) return undefined;
  }
  return { bundle: pathToFileURL(bundle) };
}

function writeAside(path, text) {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

/**
 * An esbuild plugin giving each of our sources its own `import.meta.url` (the source file's URL,
 * as Node would), so an entry that locates a file beside one of its sources (a thread entry, say)
 * can be bundled. Only for `build`: `buildSync` takes no plugins.
 */
// Spelled in pieces: this file is bundled too, and its own text must not match.
const META_URL = new RegExp(["\\bimport", "meta", "url\\b"].join("\\."), "g");
const ownImportMetaUrl = {
  name: "own-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.(?:ts|mts|mjs|js)$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const text = readFileSync(args.path, "utf8");
      META_URL.lastIndex = 0;
      if (!META_URL.test(text)) return undefined;
      const contents = text.replace(META_URL, JSON.stringify(pathToFileURL(args.path).href));
      return { contents, loader: /\.m?ts$/.test(args.path) ? "ts" : "js" };
    });
  },
};

const buildOptions = (entryPath, name) => ({
  entryPoints: [entryPath],
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "inline",
  // What an entry imports with `import()` is a chunk of its own, loaded when it is first imported
  // (the route host's main thread does not load the identity provider's code until a script
  // mounts it); modules both sides use are in chunks they share, so each is loaded once.
  // Chunks are named by their content and shared by the entries of the cache.
  splitting: true,
  // Source map paths are relative to this (the bundle's directory), so traces name the sources.
  outdir: CACHE,
  entryNames: name,
  chunkNames: "chunk-[hash]",
  outExtension: { ".js": ".mjs" },
  sourcesContent: false,
  metafile: true,
  write: false,
  logLevel: "silent",
});

/** Removes the chunks that neither `keeping` nor any entry's cache names, once they are stale. */
function removeStaleChunks(keeping) {
  const files = readdirSync(CACHE);
  const named = new Set(keeping);
  for (const file of files) {
    if (!file.endsWith(".json")) continue;
    try {
      for (const chunk of JSON.parse(readFileSync(resolve(CACHE, file), "utf8")).chunks ?? []) named.add(chunk);
    } catch {
      // another process is replacing it: its chunks are new
    }
  }
  for (const file of files) {
    const path = resolve(CACHE, file);
    if (file.startsWith("chunk-") && !named.has(file) && Date.now() - statSync(path, { throwIfNoEntry: false })?.mtimeMs > STALE_CHUNK_MS) {
      rmSync(path, { force: true });
    }
  }
}

/** Caches a build's result (see `cached`); the bundle's URL, or undefined if it cannot be used. */
function keep(result, name, builtAt) {
  const entryOut = resolve(CACHE, `${name}.mjs`);
  const code = result.outputFiles.find((f) => f.path === entryOut).text;
  const chunks = result.outputFiles.filter((f) => f.path !== entryOut);
  // This file too: a change of the build options rebuilds.
  const inputs = { [relative(ROOT, fileURLToPath(import.meta.url))]: stamp(fileURLToPath(import.meta.url), builtAt) };
  for (const input of Object.keys(result.metafile.inputs)) inputs[relative(ROOT, resolve(input))] = stamp(resolve(input), builtAt);
  mkdirSync(CACHE, { recursive: true });
  // `import.meta.url` of a source would point into the cache, not beside the source: such an
  // entry is not bundled, and that is remembered like a bundle.
  const usesImportMeta = (text) => /\bimport\.meta\b/.test(text.slice(0, text.lastIndexOf("//# sourceMappingURL=")));
  if (usesImportMeta(code) || chunks.some((c) => usesImportMeta(c.text))) {
    writeAside(resolve(CACHE, `${name}.json`), JSON.stringify({ bundle: null, inputs }));
    return undefined;
  }
  const bundleName = `${name}@${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`;
  for (const old of readdirSync(CACHE)) {
    const path = resolve(CACHE, old);
    if (old.startsWith(`${name}@`) && old !== bundleName && Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
  }
  removeStaleChunks(new Set(chunks.map((c) => relative(CACHE, c.path))));
  const bundle = resolve(CACHE, bundleName);
  // Written again even if present: a chunk's age tells that no entry has used it for a while.
  for (const chunk of chunks) writeAside(chunk.path, chunk.text);
  writeAside(bundle, code);
  const chunkNames = chunks.map((c) => relative(CACHE, c.path));
  writeAside(resolve(CACHE, `${name}.json`), JSON.stringify({ bundle: bundleName, chunks: chunkNames, inputs }));
  return pathToFileURL(bundle);
}

const loadEsbuild = () => createRequire(import.meta.url)("esbuild");

function build(entryPath, name) {
  // A source modified since the build began may be in the bundle in either version: it is stamped
  // "unstable", so the next start rebuilds rather than trusting the bundle.
  const builtAt = Date.now() - 1;
  return keep(loadEsbuild().buildSync(buildOptions(entryPath, name)), name, builtAt);
}

async function buildWithMeta(entryPath, name) {
  const builtAt = Date.now() - 1;
  return keep(await loadEsbuild().build({ ...buildOptions(entryPath, name), plugins: [ownImportMetaUrl] }), name, builtAt);
}

/** One cache slot per entry file: apps/idp/entries/node.ts -> apps-idp-node. */
const slotName = (entryPath) => relative(ROOT, entryPath).replace(/\.ts$/, "").replace(/[^A-Za-z0-9_.-]+/g, "-");

/** Makes the next `bundledEntry(entry)` build again, as after an edit (benchmarks of a cold start). */
export function forgetBundledEntry(entry) {
  const name = slotName(fileURLToPath(entry));
  for (const slot of [name, `${name}.main`]) rmSync(resolve(CACHE, `${slot}.json`), { force: true });
}

/**
 * The bundle of the `.ts` module `entry` (a file URL), built if its sources changed. Undefined if
 * it cannot be bundled (esbuild missing, a build error, `import.meta` in a source, an unwritable
 * cache): the caller then runs the source through tsx.
 */
export function bundledEntry(entry) {
  const entryPath = fileURLToPath(entry);
  const name = slotName(entryPath);
  try {
    const known = cached(name);
    return known ? (known.bundle ?? undefined) : build(entryPath, name);
  } catch {
    return undefined;
  }
}

/**
 * The same for a process entry (node/run.mjs), which can wait for esbuild's asynchronous build:
 * there each source keeps its own `import.meta.url`, so only other `import.meta` uses refuse it.
 * Its cache slot is apart from `bundledEntry`'s (thread entries are built synchronously).
 */
export async function bundledProcessEntry(entry) {
  const entryPath = fileURLToPath(entry);
  const name = `${slotName(entryPath)}.main`;
  try {
    const known = cached(name);
    return known ? (known.bundle ?? undefined) : await buildWithMeta(entryPath, name);
  } catch {
    return undefined;
  }
}
