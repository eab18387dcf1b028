/**
 * Reading a request body without letting its sender decide what it costs: a declared
 * Content-Length over the limit is refused before anything is read; a body without one (chunked)
 * is counted while it streams, copied into one buffer, and abandoned at the limit of bytes or of
 * pieces (each piece costs a runtime far more than its bytes: 1 MiB in one-byte chunks would cost
 * hundreds of MB). All three products bound their bodies this way.
 */
import { CodedError } from "#lib/errors";

export type BodyLimitCode = "BODY_TOO_LARGE" | "BODY_UNREADABLE";

export class BodyLimitError extends CodedError<BodyLimitCode> {}

/** Most pieces a streamed body of at most `maxBytes` may come in. */
export const maxBodyPieces = (maxBytes: number) => Math.max(16_384, Math.ceil(maxBytes / 64));

const tooLarge = (maxBytes: number) => new BodyLimitError("BODY_TOO_LARGE", `the request body is larger than ${maxBytes} bytes`);
const unreadable = (err: unknown) => new BodyLimitError("BODY_UNREADABLE", `the request body could not be read: ${(err as Error).message}`);

/** The declared length, when the body is judged by it (the server then reads exactly that many
 * bytes) rather than counted as it streams. Only one plain decimal counts as declared: Deno lets a
 * repeated equal header through joined ("5000000, 5000000", which Number reads as NaN, under any
 * limit), so anything else is counted as it streams. */
export function declaredLength(request: Request): number | undefined {
  const declared = request.headers.get("content-length");
  if (declared === null || request.headers.has("transfer-encoding") || !/^[0-9]+$/.test(declared)) return undefined;
  return Number(declared);
}

/**
 * Refuses (BodyLimitError) a declared length over `maxBytes` before anything is read, and says
 * whether the length is declared: the server then reads exactly that many bytes, so the body needs
 * no counting and may be read later in one piece; otherwise it must be read bounded.
 */
export function checkDeclaredLength(request: Request, maxBytes: number): boolean {
  const declared = declaredLength(request);
  if (declared !== undefined && declared > maxBytes) throw tooLarge(maxBytes);
  return declared !== undefined;
}

/**
 * The body's bytes, never more than `maxBytes` in memory (BodyLimitError otherwise). `received` is
 * the body as the runtime got it, when it gives it (ServeEnv.body: Node's IncomingMessage), read
 * in its place: on @hono/node-server, touching `request.body` first builds a whole web Request.
 */
export async function readBoundedBytes(request: Request, maxBytes: number, received?: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const declared = checkDeclaredLength(request, maxBytes);
  if (received) return collect(received[Symbol.asyncIterator](), maxBytes, () => {});
  if (declared) {
    try {
      // On Node, reading a declared body in one piece is cheapest.
      return new Uint8Array(await request.arrayBuffer());
    } catch (err) {
      throw unreadable(err);
    }
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  return collect({ next: () => reader.read() as Promise<IteratorResult<Uint8Array>> }, maxBytes, () => reader.cancel().catch(() => {}));
}

/**
 * Chunks into one buffer, counted: past `maxBytes` or `maxBodyPieces`, `stop` and BodyLimitError.
 * (A Node body is left unread rather than destroyed, so the 413 can still be written.)
 */
async function collect(chunks: { next(): Promise<IteratorResult<Uint8Array>> }, maxBytes: number, stop: () => void): Promise<Uint8Array> {
  const maxPieces = maxBodyPieces(maxBytes);
  // The first piece as it came (most bodies are one); a buffer once a second one arrives.
  let first: Uint8Array | undefined;
  let buffer: Uint8Array | undefined;
  let total = 0;
  for (let pieces = 1;; pieces++) {
    let read: IteratorResult<Uint8Array>;
    try {
      read = await chunks.next();
    } catch (err) {
      throw unreadable(err); // the client went away or broke the framing
    }
    if (read.done) break;
    const value = read.value;
    if (total + value.byteLength > maxBytes || pieces > maxPieces) {
      stop();
      throw pieces > maxPieces ? new BodyLimitError("BODY_TOO_LARGE", `the request body came in more than ${maxPieces} pieces`) : tooLarge(maxBytes);
    }
    if (first === undefined && buffer === undefined) {
      first = value;
      total = value.byteLength;
      continue;
    }
    if (buffer === undefined || total + value.byteLength > buffer.byteLength) {
      const grown = new Uint8Array(Math.min(maxBytes, Math.max((buffer?.byteLength ?? 0) * 2, 64 * 1024, total + value.byteLength)));
      grown.set(buffer ? buffer.subarray(0, total) : first!);
      buffer = grown;
      first = undefined;
    }
    buffer.set(value, total);
    total += value.byteLength;
  }
  return buffer ? buffer.subarray(0, total) : (first ?? new Uint8Array(0));
}

/**
 * A body to hand on (to a mounted app), bounded the same way: a declared length over the limit
 * is refused at once; a streamed body is counted as the receiver reads it and errors past the
 * limit, and `exceeded()` then says so, whatever the receiver made of its cut-off body.
 */
export function boundedStream(request: Request, maxBytes: number): { body: ReadableStream<Uint8Array> | null; exceeded(): boolean } {
  if (checkDeclaredLength(request, maxBytes) || request.body === null) return { body: request.body, exceeded: () => false };
  const maxPieces = maxBodyPieces(maxBytes);
  let total = 0;
  let pieces = 0;
  let over = false;
  const counted = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > maxBytes || ++pieces > maxPieces) {
          over = true;
          controller.error(tooLarge(maxBytes));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return { body: counted, exceeded: () => over };
}

/**
 * After a refusal that never read the request body (413 on its declared length, 404, 405, 429 ...):
 * cancels the body, so the runtime sends the answer now. Without it workerd holds the answer back
 * while the client still sends (under `wrangler dev` its proxy then answers 503 "restarted
 * mid-request" instead). A body the app read, or handed on (a locked stream), is left alone; so
 * is every answer below 400.
 */
export async function releaseUnreadBody(request: Request, response: Response): Promise<void> {
  if (response.status < 400 || request.method === "GET" || request.method === "HEAD") return;
  const body = request.body;
  if (!body || request.bodyUsed || body.locked) return;
  // Touching the body once the answer is out spoils the connection it came on (under `wrangler dev`
  // the next request on it got that 503), so a body declared small enough to end soon is read to
  // its end first, and only one that may never end is cancelled.
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (Number.isSafeInteger(declared) && declared <= DRAINED_BODY_BYTES) await body.pipeTo(new WritableStream()).catch(() => {});
  else body.cancel().catch(() => {});
}

/** The largest declared body releaseUnreadBody reads to its end rather than cancels. */
export const DRAINED_BODY_BYTES = 8 * 1024 * 1024;
