/** Entry of each session thread on Deno (spawned by apps/sessions/live/deno-threads.ts). */
import { denoFileTree } from "#lib/adapters/deno/files";
import { denoThreadEndpoint } from "#lib/adapters/deno/threads";
import { serveSessionThread } from "../live/thread-host.ts";

serveSessionThread(denoThreadEndpoint(), { worktrees: denoFileTree() });
