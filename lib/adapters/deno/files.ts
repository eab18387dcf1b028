/** The host file system as a FileTree on Deno (confinement rules, and what each host error
 * becomes, in lib/files/host.ts: Deno's errors carry the POSIX `code` too). */
import { type FileTree, type HostEntryKind, hostErrorKind, hostFileTree, type HostPaths } from "#lib/files";

// Deno's types are not part of this TypeScript project; this is the slice used here.
interface DenoEntryInfo {
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
}
declare const Deno: {
  realPath(path: string): Promise<string>;
  lstat(path: string): Promise<DenoEntryInfo>;
  readTextFile(path: string): Promise<string>;
  readFile(path: string): Promise<Uint8Array>;
  writeTextFile(path: string, text: string): Promise<void>;
  mkdir(path: string, options?: { recursive?: boolean }): Promise<void>;
  readDir(path: string): AsyncIterable<DenoEntryInfo & { name: string }>;
  remove(path: string, options?: { recursive?: boolean }): Promise<void>;
  errors: { NotFound: new () => Error; AlreadyExists: new () => Error; NotADirectory?: new () => Error };
  env: { get(name: string): string | undefined };
};

function kindOf(s: DenoEntryInfo): HostEntryKind {
  return s.isSymlink ? "symlink" : s.isFile ? "file" : s.isDirectory ? "directory" : "other";
}

function missing(err: unknown): boolean {
  if (err instanceof Deno.errors.NotFound) return true;
  if (Deno.errors.NotADirectory && err instanceof Deno.errors.NotADirectory) return true;
  return hostErrorKind(err) === "missing";
}

async function orMissing<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (missing(err)) return undefined;
    throw err;
  }
}

export function denoFileTree(): FileTree {
  return hostFileTree({
    realPath: (path) => orMissing(Deno.realPath(path)),
    lstatKind: async (path) => {
      const info = await orMissing(Deno.lstat(path));
      return info && kindOf(info);
    },
    readText: (path) => Deno.readTextFile(path),
    readBytes: (path) => Deno.readFile(path),
    writeText: (path, text) => Deno.writeTextFile(path, text),
    async makeDirectory(path) {
      try {
        await Deno.mkdir(path);
      } catch (err) {
        if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      }
    },
    async readDir(path) {
      const out: { name: string; kind: HostEntryKind }[] = [];
      for await (const e of Deno.readDir(path)) out.push({ name: e.name, kind: kindOf(e) });
      return out;
    },
    removeFile: (path) => Deno.remove(path),
    removeTree: (path) => Deno.remove(path, { recursive: true }),
  });
}

/** Real paths and the temporary directory (`$TMPDIR`, else `/tmp`, as Deno's own temp files). */
export function denoHostPaths(): HostPaths {
  return { realPath: (path) => orMissing(Deno.realPath(path)), tempDirectory: () => Deno.env.get("TMPDIR") || "/tmp" };
}
