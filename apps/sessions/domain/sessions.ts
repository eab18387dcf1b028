/**
 * Session lifecycle: create (row `starting`, runtime opened, then `ready`), close, the restart
 * recovery that runs when the service starts, and runtimes the live layer reports lost.
 *
 * A failure after the row exists marks it `crashed` with `last_error`, leaves nothing live, and
 * the error names the session in `details.session_id`: INVALID_PATH / FILE_NOT_FOUND for a
 * startup file that escapes the worktree or is missing, STARTUP_FAILED for anything that goes
 * wrong in the runtime (a library or startup file that throws, a library gone from the directory).
 */
import { MAX_JSON_DEPTH, valueDepth } from "#lib/http";
import { checkAbsolutePath, FileTreeError } from "#lib/files";
import type { SessionSpec } from "../live/types.ts";
import * as db from "../store/sessions.ts";
import { failExecutionsOfPreviousRun } from "../store/executions.ts";
import { getSettings, listCapabilities, listEntries, listStartupFiles } from "../store/templates.ts";
import type { ServiceContext } from "./context.ts";
import { liveErrorCode, sessionNotFound, SessionServiceError } from "./errors.ts";
import { readFileIn } from "./files.ts";
import { readLibrary } from "./libraries.ts";
import { type SessionRecord, type SessionStatus, timestamp } from "./records.ts";
import { defaultSettings } from "./settings.ts";
import { requireTemplate } from "./templates.ts";

const RESTART_SESSION_ERROR = "the runtime did not survive a restart of the daemon";
const RESTART_EXECUTION_ERROR = "the daemon restarted while this execution was running";

interface CreateSessionInput {
  template_id: string;
  workspace_id: string;
  base_commit_oid: string;
  worktree_path: string;
}

const invalidWorktree = (message: string, worktree_path: string) =>
  new SessionServiceError("VALIDATION_ERROR", message, { issues: [{ path: "worktree_path", message }], worktree_path });

/**
 * A worktree outside the daemon's roots (judged after symlinks) is 422 INVALID_PATH, whether it
 * exists or not, so the answer tells nothing about the disk beyond the roots.
 */
async function checkWorktreeRoots(ctx: ServiceContext, root: string): Promise<void> {
  const roots = ctx.worktreeRoots;
  if (!roots || (await roots.contains(root))) return;
  throw outsideRoots(ctx, root);
}

function outsideRoots(ctx: ServiceContext, root: string): SessionServiceError {
  const roots = ctx.worktreeRoots?.roots ?? [];
  return new SessionServiceError(
    "INVALID_PATH",
    `worktree_path is outside the worktree roots (${roots.join(", ")}); the daemon's --worktree-roots (SESSIONS_WORKTREE_ROOTS) lists them`,
    { worktree_path: root, worktree_roots: [...roots] },
  );
}

export async function createSession(ctx: ServiceContext, input: CreateSessionInput): Promise<SessionRecord> {
  await requireTemplate(ctx, input.template_id);
  const root = input.worktree_path;
  if (!root.startsWith("/")) throw invalidWorktree("worktree_path must be an absolute path", root);
  // A name the file system would refuse (NUL, over 255 bytes) is refused here, before anything is
  // stored, on every runtime alike. Nothing outside the roots is looked at.
  let kind: Awaited<ReturnType<typeof ctx.worktrees.kind>>;
  try {
    checkAbsolutePath(root);
    await checkWorktreeRoots(ctx, root);
    kind = await ctx.worktrees.kind(root, "");
  } catch (err) {
    if (err instanceof FileTreeError) throw invalidWorktree(`worktree_path is not a valid path: ${err.message.replace(/^invalid path:? ?/, "")}`, root);
    throw err;
  }
  if (kind !== "directory") {
    throw invalidWorktree(
      ctx.worktreeUploads
        ? `worktree_path is not an existing directory: on this deployment worktrees live in storage, not on a disk; upload the files first with PUT /api/v1/worktree-files?root=${
          encodeURIComponent(root)
        }&path=<file> (docs/sessions.md)`
        : "worktree_path is not an existing directory",
      root,
    );
  }

  // Kept as its real path, checked once more now that it is known to exist: nothing in what the
  // client wrote (a symlink, `..`) can be swapped later to point the session elsewhere.
  let worktreePath = root;
  if (ctx.worktreeRoots) {
    const real = await ctx.worktreeRoots.realPathInside(root);
    if (real === undefined) throw outsideRoots(ctx, root);
    worktreePath = real;
  }
  const session: SessionRecord = { id: ctx.newId(), ...input, worktree_path: worktreePath, status: "starting", created_at: timestamp(ctx.clock()) };
  await db.insertSession(ctx.store, session);
  try {
    await ctx.live.open(await sessionSpec(ctx, session));
  } catch (err) {
    const failure = startupFailure(err, session.id);
    if (failure.code === "INTERNAL") ctx.logger.error("session startup failed", { session_id: session.id, error: String(err) });
    await sessionsCrashed(ctx, [session.id], failure.message);
    throw failure;
  }
  let ready: boolean;
  try {
    ready = await db.markReady(ctx.store, session.id);
  } catch (err) {
    await ctx.live.close(session.id); // not reported ready, so not left running
    throw err;
  }
  if (!ready) {
    // Closed while it was starting: the close already stored its state; discard the runtime.
    await ctx.live.close(session.id);
    return requireSession(ctx, session.id);
  }
  const record: SessionRecord = { ...session, status: "ready" };
  ctx.liveSessions.set(record.id, record);
  return record;
}

/** Everything the runtime needs, read from the template and the files now. */
async function sessionSpec(ctx: ServiceContext, session: SessionRecord): Promise<SessionSpec> {
  const templateId = session.template_id;
  const [settings, capabilities, modules, libraries, startupFiles] = await Promise.all([
    getSettings(ctx.store, templateId),
    listCapabilities(ctx.store, templateId),
    listEntries(ctx.store, "template_modules", templateId),
    listEntries(ctx.store, "template_libraries", templateId),
    listStartupFiles(ctx.store, templateId),
  ]);
  // Configs are bounded when they are stored; a row stored before that (or by hand) must not reach
  // a thread or the sandbox, whose copies would run out of stack.
  const deep = capabilities.find((c) => valueDepth(c.config) > MAX_JSON_DEPTH - 1);
  if (deep) {
    throw new SessionServiceError("STARTUP_FAILED", `the config of the ${deep.kind} capability ${deep.name} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  const unavailable = modules.filter((m) => !(ctx.modules as readonly string[]).includes(m.name));
  if (unavailable.length > 0) {
    throw new SessionServiceError("STARTUP_FAILED", `module ${unavailable[0]!.name} is not in this daemon's module catalog`);
  }
  const librarySources: SessionSpec["libraries"] = [];
  for (const { name } of libraries) {
    const source = await readLibrary(ctx.libraries, name);
    if (source === undefined) throw new SessionServiceError("STARTUP_FAILED", `library ${name} is no longer in the library directory`);
    librarySources.push({ name, source });
  }
  const startup: SessionSpec["startupFiles"] = [];
  for (const file of startupFiles) {
    const source = await readFileIn(ctx.worktrees, session.worktree_path, file.path, { path: file.path });
    startup.push({ path: file.path, order_index: file.order_index, source });
  }
  return {
    sessionId: session.id,
    worktreePath: session.worktree_path,
    settings: settings ?? defaultSettings(),
    capabilities: capabilities.map(({ kind, name, enabled, config }) => ({ kind, name, enabled, config })),
    modules: modules.map((m) => m.name),
    libraries: librarySources,
    startupFiles: startup,
  };
}

function startupFailure(err: unknown, sessionId: string): SessionServiceError {
  if (err instanceof SessionServiceError) return new SessionServiceError(err.code, err.message, { ...err.details, session_id: sessionId });
  if (liveErrorCode(err) === "STARTUP_FAILED") {
    return new SessionServiceError("STARTUP_FAILED", (err as Error).message, { session_id: sessionId });
  }
  return new SessionServiceError("INTERNAL", "session startup failed: internal error", { session_id: sessionId });
}

/** The session: from memory while this process holds it live (its row says what the memory says),
 * else from the store. */
export async function requireSession(ctx: ServiceContext, id: string): Promise<SessionRecord> {
  const session = ctx.liveSessions.get(id) ?? (await db.getSession(ctx.store, id));
  if (!session) throw sessionNotFound(id);
  return session;
}

export const listSessions = (ctx: ServiceContext, status?: SessionStatus) => db.listSessions(ctx.store, status);

/**
 * `starting`/`ready` → `closed` (stored first, then the runtime discarded). Idempotent: a closed
 * session comes back as it is, and so does a crashed one (it has no runtime to discard).
 */
export async function closeSession(ctx: ServiceContext, id: string): Promise<SessionRecord> {
  const session = await requireSession(ctx, id);
  if (session.status !== "starting" && session.status !== "ready") return session;
  ctx.liveSessions.delete(id);
  await db.markClosed(ctx.store, id, timestamp(ctx.clock()));
  await ctx.live.close(id);
  return requireSession(ctx, id);
}

/**
 * A fresh runtime for a `ready` session: a new global scope, its libraries loaded and startup
 * files run again, as at creation (read again now), under the same id, with its executions and
 * worktree. 409 SESSION_BUSY while an execution runs (cancel it first); no execution can start
 * while it restarts. A startup that fails now leaves the session `crashed` with `last_error`.
 */
export async function restartSession(ctx: ServiceContext, id: string): Promise<SessionRecord> {
  const session = await requireSession(ctx, id);
  if (session.status !== "ready") {
    throw new SessionServiceError("SESSION_NOT_READY", `session ${id} is ${session.status}, not ready`, { status: session.status });
  }
  const release = claimSession(ctx, id, `session ${id} is running an execution; cancel it first`);
  try {
    let spec: SessionSpec;
    try {
      spec = await sessionSpec(ctx, session); // a startup file gone fails here, with the old runtime still there
    } catch (err) {
      throw startupFailure(err, id);
    }
    await ctx.live.close(id);
    try {
      await ctx.live.open(spec);
    } catch (err) {
      const failure = startupFailure(err, id);
      await sessionsCrashed(ctx, [id], failure.message);
      throw failure;
    }
  } finally {
    release();
  }
  return requireSession(ctx, id);
}

/**
 * Claims a session for an execution or a restart: the one place the service decides SESSION_BUSY
 * (409, with `busyMessage`). Checked and claimed with no await in between, so of two simultaneous
 * requests exactly one passes, and before anything is read or stored, so a refused one changes
 * nothing. Returns the release. The live layer never sees a second execution of a claimed session.
 */
export function claimSession(ctx: ServiceContext, id: string, busyMessage: string): () => void {
  if (ctx.busy.has(id)) throw new SessionServiceError("SESSION_BUSY", busyMessage);
  ctx.busy.add(id);
  return () => ctx.busy.delete(id);
}

/** At start: what the last process had alive is closed, and its running executions end as
 * errors; except ready sessions whose runtime outlived the service's memory (`live.adopt`: on
 * workerd the service's object can be evicted while sessions sit idle), which stay ready. */
export async function recoverAfterRestart(ctx: ServiceContext): Promise<{ sessions: number; executions: number; adopted: number }> {
  const at = timestamp(ctx.clock());
  const executions = await failExecutionsOfPreviousRun(ctx.store, at, RESTART_EXECUTION_ERROR);
  const ready = ctx.live.adopt ? await db.listSessions(ctx.store, "ready") : [];
  const adopted = ready.length ? new Set(await ctx.live.adopt!(ready.map((s) => s.id))) : new Set<string>();
  for (const session of ready) if (adopted.has(session.id)) ctx.liveSessions.set(session.id, session);
  const sessions = await db.closeSessionsOfPreviousRun(ctx.store, at, RESTART_SESSION_ERROR, [...adopted]);
  return { sessions, executions, adopted: adopted.size };
}

/** The live layer lost these runtimes outside any call (a crashed or hung worker). */
export async function runtimesLost(ctx: ServiceContext, ids: string[], reason: string): Promise<void> {
  if (ids.length === 0) return;
  await sessionsCrashed(ctx, ids, `runtime lost: ${reason}`);
}

/** `starting`/`ready` → `crashed` with `last_error`; they leave the live set first. */
export async function sessionsCrashed(ctx: ServiceContext, ids: string[], lastError: string): Promise<void> {
  for (const id of ids) ctx.liveSessions.delete(id);
  await db.markCrashed(ctx.store, ids, lastError);
}
