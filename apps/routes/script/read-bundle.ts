/**
 * Reads a script and the files it may `require` from a FileTree: every `.js`, `.cjs` and `.json`
 * file under the script's directory (dot-directories and node_modules skipped), since the sandbox
 * resolves `require` synchronously and must have the files in hand before the script runs.
 * Bounded, so a script in a large directory fails with a clear message instead of reading it all.
 */
import type { FileTree } from "../../../lib/files/tree.ts";
import type { ScriptBundle } from "./script-sandbox.ts";

export const BUNDLE_LIMITS = { files: 2000, bytes: 16 * 1024 * 1024 };
const SOURCE = /\.(?:js|cjs|json)$/;

export class ScriptReadError extends Error {
  readonly code = "SCRIPT_READ_FAILED";
  constructor(message: string) {
    super(message);
    this.name = "ScriptReadError";
  }
}

/** `scriptPath` is absolute; the bundle's names are relative to its directory ("/app.js"). */
export async function readScriptBundle(tree: FileTree, scriptPath: string): Promise<ScriptBundle> {
  const cut = scriptPath.lastIndexOf("/");
  const dir = scriptPath.slice(0, cut) || "/";
  const entryName = scriptPath.slice(cut + 1);
  if ((await tree.kind(dir, entryName).catch(() => undefined)) !== "file") throw new ScriptReadError(`the script ${scriptPath} does not exist`);
  const files: Record<string, string> = {};
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
      if (!SOURCE.test(entry.name) && path !== entryName) continue;
      if (++count > BUNDLE_LIMITS.files) throw new ScriptReadError(`more than ${BUNDLE_LIMITS.files} script files under ${dir}: put the script in a directory of its own`);
      const text = await tree.readText(dir, path);
      bytes += text.length;
      if (bytes > BUNDLE_LIMITS.bytes) throw new ScriptReadError(`the script files under ${dir} are larger than ${BUNDLE_LIMITS.bytes} bytes: put the script in a directory of its own`);
      files[`/${path}`] = text;
    }
  }
  await walk("");
  if (files[`/${entryName}`] === undefined) files[`/${entryName}`] = await tree.readText(dir, entryName);
  return { entry: `/${entryName}`, files };
}

/** Whether two bundles hold the same files with the same texts (dev mode's reload check). */
export function sameBundle(a: ScriptBundle, b: ScriptBundle): boolean {
  const keys = Object.keys(a.files);
  return a.entry === b.entry && keys.length === Object.keys(b.files).length && keys.every((k) => a.files[k] === b.files[k]);
}
