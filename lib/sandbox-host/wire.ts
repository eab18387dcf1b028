/**
 * How a batch of pool messages crosses a thread channel, for every app on the pool (pool.ts): runs
 * on both ends of each channel, the main thread and its threads, each encoding what it posts in a
 * turn and decoding what it receives. What a payload says is its owner's (the route host's calls
 * and outcomes: apps/routes/script/script-wire.ts).
 *
 * Structured clone walks every object of a message, and for
 * the small messages of a request (an id, a handler, a JSON string) the walk costs several times
 * the copy: measured on Node 20, a call and its answer as objects cost ~7 µs of the main thread's
 * CPU, as strings ~2 µs. So a batch whose messages are all calls or answers with a string payload
 * (an owner that sends JSON text, as the route host does) crosses as one string:
 *
 *   c<id>:<length>:<payload>   a call          d<id>:<length>:<payload>   its answer
 *
 * concatenated in order. Anything else crosses as objects, cloned as before.
 */

type Encodable = { t: "call"; id: number; req: unknown } | { t: "done"; id: number; res: unknown };

/** The batch as one string, or undefined when a message is not a call or answer with a string payload. */
export function encodeStrings(messages: readonly { t: string }[]): string | undefined {
  let out = "";
  for (const m of messages) {
    const e = m as Encodable;
    const payload = e.t === "call" ? e.req : e.t === "done" ? e.res : undefined;
    if (typeof payload !== "string") return undefined;
    out += `${e.t === "call" ? "c" : "d"}${e.id}:${payload.length}:${payload}`;
  }
  return out;
}

/** The messages of a batch made by `encodeStrings`. */
export function decodeStrings<T>(text: string): T[] {
  const messages: T[] = [];
  let at = 0;
  while (at < text.length) {
    const kind = text[at];
    const idEnd = text.indexOf(":", at + 1);
    const lengthEnd = text.indexOf(":", idEnd + 1);
    if (idEnd < 0 || lengthEnd < 0 || (kind !== "c" && kind !== "d")) throw new Error("a malformed message batch");
    const id = Number(text.slice(at + 1, idEnd));
    const length = Number(text.slice(idEnd + 1, lengthEnd));
    const payload = text.slice(lengthEnd + 1, lengthEnd + 1 + length);
    messages.push((kind === "c" ? { t: "call", id, req: payload } : { t: "done", id, res: payload }) as T);
    at = lengthEnd + 1 + length;
  }
  return messages;
}
