/**
 * Reads a script and the files it may `require` from a FileTree: every `.js`, `.cjs` and `.json`
 * file under the script's directory (dot-directories and node_modules skipped), since the sandbox
 * resolves `require` synchronously and must have the files in hand before the script runs.
 * Bounded, so a script in a large directory fails with a clear message instead of reading it all.
 */
import { CodedError } from "#lib/errors";
import type { FileTree } from "#lib/files";
import { base64Of } from "../core/request.ts";
import type { ScriptBundle } from "./script-sandbox.ts";

const BUNDLE_LIMITS = { files: 2000, bytes: 16 * 1024 * 1024 };
const SOURCE = /\.(?:js|cjs|json)$/;

export type ScriptReadErrorCode = "SCRIPT_READ_FAILED";

class ScriptReadError extends CodedError<ScriptReadErrorCode> {
  constructor(message: string) {
    super("SCRIPT_READ_FAILED", message);
  }
}

function splitPath(scriptPath: string): { dir: string; entryName: string } {
  const cut = scriptPath.lastIndexOf("/");
  return { dir: scriptPath.slice(0, cut) || "/", entryName: scriptPath.slice(cut + 1) };
}

/** Calls `take` for each file under `dir` (dot-entries and node_modules skipped), within the limits. */
async function walkFiles(tree: FileTree, dir: string, wanted: (path: string) => boolean, take: (path: string) => Promise<number>): Promise<void> {
  let count = 0;
  let bytes = 0;
  async function walk(rel: string): Promise<void> {
    for (const entry of await tree.list(dir, rel)) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.kind === "directory") {
        await walk(path);
        continue;
      }
      if (!wanted(path)) continue;
      if (++count > BUNDLE_LIMITS.files) {
        throw new ScriptReadError(`more than ${BUNDLE_LIMITS.files} files under ${dir}: put the script in a directory of its own`);
      }
      bytes += await take(path);
      if (bytes > BUNDLE_LIMITS.bytes) {
        throw new ScriptReadError(`the files under ${dir} are larger than ${BUNDLE_LIMITS.bytes} bytes: put the script in a directory of its own`);
      }
    }
  }
  await walk("");
}

/** `scriptPath` is absolute; the bundle's names are relative to its directory ("/app.js"). */
export async function readScriptBundle(tree: FileTree, scriptPath: string): Promise<ScriptBundle> {
  const { dir, entryName } = splitPath(scriptPath);
  if ((await tree.kind(dir, entryName).catch(() => undefined)) !== "file") throw new ScriptReadError(`the script ${scriptPath} does not exist`);
  const files: Record<string, string> = {};
  await walkFiles(tree, dir, (path) => SOURCE.test(path) || path === entryName, async (path) => {
    const text = await tree.readText(dir, path);
    files[`/${path}`] = text;
    return text.length;
  });
  files[`/${entryName}`] ??= await tree.readText(dir, entryName);
  return { entry: `/${entryName}`, files };
}

/**
 * What a Worker is built with (workerd has no host file system): the script bundle, and every
 * file under the script's directory as base64, served by `app.static` from memory.
 */
export interface WorkerBundle {
  script: ScriptBundle;
  files: Record<string, string>;
  /** The policy file's text (`bundle --policy-file`), checked when bundled; ROUTES_POLICY overrides it. */
  policy?: string;
  /** Assets modules (`bundle --assets`): module name -> its files as base64. */
  assets?: Record<string, Record<string, string>>;
}

/** Every file under `dir`, as base64 by its path relative to `dir` (within BUNDLE_LIMITS). */
async function readFilesBase64(tree: FileTree, dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  await walkFiles(tree, dir, () => true, async (path) => {
    const bytes = await tree.readBytes(dir, path);
    files[path] = base64Of(bytes);
    return bytes.length;
  });
  return files;
}

/** `assets`: module name -> absolute directory, each bundled for `app.staticFromAssetsModule`. */
export async function readWorkerBundle(tree: FileTree, scriptPath: string, assets: Record<string, string> = {}): Promise<WorkerBundle> {
  const script = await readScriptBundle(tree, scriptPath);
  const bundle: WorkerBundle = { script, files: await readFilesBase64(tree, splitPath(scriptPath).dir) };
  for (const [name, dir] of Object.entries(assets)) (bundle.assets ??= {})[name] = await readFilesBase64(tree, dir);
  return bundle;
}

/** Bundled files (base64 by relative path) as bytes, keyed `<root>/<path>` as memoryFileTree
 * wants them. */
export function bundledFiles(files: Record<string, string>, root: string): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const [path, b64] of Object.entries(files)) out[`${root}/${path}`] = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return out;
}

/** Whether two bundles hold the same files with the same texts (dev mode's reload check). */
export function sameBundle(a: ScriptBundle, b: ScriptBundle): boolean {
  const keys = Object.keys(a.files);
  return a.entry === b.entry && keys.length === Object.keys(b.files).length && keys.every((k) => a.files[k] === b.files[k]);
}
