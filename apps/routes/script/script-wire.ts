/**
 * The route host's wire: what crosses between the host and its script sandboxes, and how. This
 * module owns the format on the host's side; the other end, inside QuickJS, is the dispatch
 * section of js/httpmod.js (`readInput`, `answerText`).
 *
 * Threads: the format has two ends, so this module is used on both sides of the thread boundary,
 * and only for this. The main thread encodes calls (`encodeDispatchCall`) and decodes outcomes
 * (`decodeOutcome`) in runtime.ts; a request thread decodes calls (`decodeDispatchCall`), reads
 * the dispatcher's answer (`dispatcherResponse`, script-sandbox.ts) and encodes outcomes
 * (`encodeOutcome`, script-side.ts). In process (workerd, `--threads 0`) everything runs on the
 * serving thread, and a call and its outcome stay objects: only the dispatcher's answer is text.
 *
 * The forms: strings, which cross a thread channel several times cheaper than objects
 * (lib/sandbox-host/wire.ts batches them), and a compact answer that spares QuickJS making JSON:
 *
 *   a call        `<handler> <input JSON>`     the handler's index, one space, the DispatchInput
 *   into QuickJS  DISPATCH_GLOBAL(handler, input JSON)
 *   an answer     `\x01`..`\x08` + body        compact: status 200, no header but a helper's
 *                                               content type, a string body (COMPACT_TYPES)
 *                 `{"status":...}`             the dispatcher's JSON for anything else
 *   an outcome    a compact answer as it is, else the DispatchOutcome as JSON; an outcome with
 *                 bytes or a value to render stays an object (structured clone copies the bytes)
 *
 * No JSON text starts with a character below `\t`, so the first character tells the forms apart.
 */
import type { HostValue } from "#lib/sandbox";

/** The global function httpmod.js defines for the host's calls (non-writable). */
export const DISPATCH_GLOBAL = "__httpmod_dispatch";

/**
 * The content types of a compact answer, by code: the dispatcher answers status 200 with no
 * header but one of these (index 0: none) and a string body as the character `\x01` + code
 * (`\x05` + code when the handler read `request.session`) followed by the body. httpmod.js spells
 * the same list (`TYPES`; script-wire.test.ts keeps them equal).
 */
export const COMPACT_TYPES = ["", "text/plain; charset=utf-8", "text/html; charset=utf-8", "application/json"] as const;

export interface ScriptResponse {
  status: number;
  headers: [string, string][];
  body: string | null;
  bytes?: Uint8Array;
  /** `res.html(value)` with a non-string value: the host's renderer makes the body. */
  render?: { value: HostValue };
  /** The handler read `request.session` (a new session then gets its cookie). */
  sessionUsed?: boolean;
}

export interface ConsoleLine {
  level: string;
  text: string;
}

export type DispatchOutcome =
  | { ok: true; response: ScriptResponse; console: ConsoleLine[] }
  | { ok: false; failure: "error" | "timeout" | "memory" | "broken"; message: string; stack?: string; console: ConsoleLine[] };

// ---- a call --------------------------------------------------------------------------------------

export const encodeDispatchCall = (handler: number, inputJson: string): string => `${handler} ${inputJson}`;

/** A call made by `encodeDispatchCall`. */
export function decodeDispatchCall(call: string): { handler: number; inputJson: string } {
  const space = call.indexOf(" ");
  const handler = space > 0 ? Number(call.slice(0, space)) : NaN;
  if (!Number.isInteger(handler) || handler < 0) throw new Error("a malformed dispatch call");
  return { handler, inputJson: call.slice(space + 1) };
}

// ---- an answer of the dispatcher -----------------------------------------------------------------

/** Whether `text` is a compact answer of the dispatcher (see COMPACT_TYPES). */
export function isCompactAnswer(text: string): boolean {
  const c = text.charCodeAt(0);
  return c >= 1 && c <= 8;
}

/** The response a compact answer (`isCompactAnswer`) stands for. */
export function compactAnswerResponse(text: string): ScriptResponse {
  const c = text.charCodeAt(0);
  const type = COMPACT_TYPES[(c - 1) & 3]!;
  const response: ScriptResponse = { status: 200, headers: type === "" ? [] : [["content-type", type]], body: text.slice(1) };
  if (c > 4) response.sessionUsed = true;
  return response;
}

/** The dispatcher's JSON answer (httpmod.js `answerText`). */
interface AnswerJson {
  status: number;
  headers: [string, string][];
  body: string | null;
  bytes: boolean;
  render?: HostValue;
  hasRender: boolean;
  sessionUsed: boolean;
}

/** The response the dispatcher answered, compact or JSON; `bytes` are what the handler sent
 * through the host module's `bytes` (they do not go through the text). */
export function dispatcherResponse(text: string, bytes: Uint8Array | undefined): ScriptResponse {
  if (isCompactAnswer(text)) return compactAnswerResponse(text);
  const d = JSON.parse(text) as AnswerJson;
  const response: ScriptResponse = {
    status: d.status,
    headers: d.headers.map(([n, v]) => [String(n), String(v)]),
    body: typeof d.body === "string" ? d.body : null,
  };
  if (d.bytes && bytes) response.bytes = bytes;
  if (d.hasRender) response.render = { value: d.render ?? null };
  if (d.sessionUsed) response.sessionUsed = true;
  return response;
}

// ---- an outcome, back across the thread channel --------------------------------------------------

/** An outcome as it crosses back: a compact answer as it is, else JSON when JSON keeps all of it. */
export function encodeOutcome(outcome: DispatchOutcome | string): DispatchOutcome | string {
  if (typeof outcome === "string") return outcome;
  return outcome.ok && (outcome.response.bytes !== undefined || outcome.response.render !== undefined) ? outcome : JSON.stringify(outcome);
}

/** An outcome as `encodeOutcome` sent it. */
export function decodeOutcome(sent: DispatchOutcome | string): DispatchOutcome {
  if (typeof sent !== "string") return sent;
  return isCompactAnswer(sent) ? { ok: true, response: compactAnswerResponse(sent), console: [] } : (JSON.parse(sent) as DispatchOutcome);
}
