/** Entry of each handler thread on Deno (a Web Worker spawned by apps/routes/entries/deno.ts). */
import { denoThreadEndpoint } from "#lib/adapters/deno/threads";
import { serveScriptThread } from "../script/script-side.ts";

serveScriptThread(denoThreadEndpoint());
