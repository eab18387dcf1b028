/**
 * What a runtime's entry supplies to the session service (its command line, or the service
 * embedded in the route host), and the helpers both read it with. Apart from cli.ts so that an
 * entry naming its host does not load the service itself (apps/sessions/embed.ts loads it on first
 * use).
 */
import { defaultRootDirs, type FileTree, type HostPaths, hostRoots, type Roots } from "#lib/files";
import type { StaticDirectory } from "#lib/http";
import type { HostRuntime } from "#lib/runtime";
import type { ThreadPoolOptions } from "./live/thread-pool.ts";
import type { LiveRuntimes } from "./live/types.ts";

/** What the entry file supplies for its runtime. */
export interface SessionsHost {
  /** The host file system as a FileTree (worktrees and the library directory). */
  files: FileTree;
  /** Real paths and the temp directory: where worktrees may be (`--worktree-roots`). */
  paths: HostPaths;
  /** The runtime's pool of sandbox threads (Node worker_threads, Deno Web Workers). */
  threadRuntimes(options: ThreadPoolOptions): LiveRuntimes;
  /** Where the built web UI is (apps/sessions/ui/dist): served at `/` when its index.html exists. */
  uiDirectory?: string;
}

/** The built web UI, if the host has one. */
export async function webUi(host: SessionsHost): Promise<StaticDirectory | undefined> {
  if (!host.uiDirectory) return undefined;
  const kind = await host.files.kind(host.uiDirectory, "index.html").catch(() => undefined);
  return kind === "file" ? { tree: host.files, root: host.uiDirectory } : undefined;
}

/** The UI's directory beside an entry file (`new URL("./ui/dist", import.meta.url)`), as a path. */
export const uiDirectoryOf = (url: URL) => decodeURIComponent(url.pathname);

/**
 * The worktree roots: `setting` (comma-separated, relative to the working directory), or by
 * default the working directory and the temp directory, less either that is `/` or the home
 * directory. Throws RootsError for a root that is missing, `/` or the home directory.
 */
export async function worktreeRoots(runtime: HostRuntime, paths: HostPaths, setting: string | undefined): Promise<Roots> {
  const home = runtime.env.HOME || undefined;
  const dirs = setting === undefined
    ? await defaultRootDirs(paths.realPath, runtime.cwd(), paths.tempDirectory(), home)
    : setting.split(",").map((d) => d.trim()).filter((d) => d !== "").map((d) => runtime.resolvePath(runtime.cwd(), d));
  return hostRoots(paths.realPath, dirs, home);
}
